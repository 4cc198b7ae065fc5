// What the research portal adds for the chat tray: its state as the tray's context, and the
// handler of the agent's open_article action. The rest of this file is the portal itself.
const tray = document.querySelector("agentstream-chat");
const page = document.body.dataset.page;
const reportId = Number(document.body.dataset.report || 0) || null;
const selectedTab = document.querySelector("[role=tab][aria-selected=true]");
tray.updateContext({ page, tab: selectedTab ? selectedTab.dataset.tab : null, report_id: reportId });

tray.clientActions = {
  // "Open A0042" from the assistant opens the article in the portal's reader.
  open_article: (action) => {
    const id = action.data && action.data.article_id;
    const reader = document.getElementById("reader");
    if (!id || !reader) return;
    reader.hidden = false;
    reader.querySelector("[data-article]").textContent = id;
    tray.updateContext({ article_id: id });
  },
};

// Tabs and subtabs switch in place; each switch tells the tray where the analyst is now.
for (const tab of document.querySelectorAll("[role=tab]")) {
  tab.addEventListener("click", () => {
    for (const other of document.querySelectorAll("[role=tab]")) {
      other.setAttribute("aria-selected", String(other === tab));
      document.getElementById(other.getAttribute("aria-controls")).hidden = other !== tab;
    }
    tray.updateContext({ tab: tab.dataset.tab, subtab: null });
    for (const b of document.querySelectorAll(".subtabs button")) b.setAttribute("aria-pressed", "false");
  });
}
for (const button of document.querySelectorAll(".subtabs button")) {
  button.addEventListener("click", () => {
    const on = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", String(on));
    tray.updateContext({ subtab: on ? button.dataset.subtab : null });
  });
}
