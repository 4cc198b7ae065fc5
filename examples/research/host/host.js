// What the research portal adds for the chat tray: its state as the tray's context, its
// search filters as the state it shares with the agent, and the handler of the agent's
// open_article action. The rest of this file is the portal itself.
const tray = document.querySelector("agentstream-chat");
const page = document.body.dataset.page;
const reportId = Number(document.body.dataset.report || 0) || null;
const selectedTab = document.querySelector("[role=tab][aria-selected=true]");
tray.updateContext({ page, tab: selectedTab ? selectedTab.dataset.tab : null, report_id: reportId });

tray.clientActions = {
  // "Open A0042" from the assistant opens the article in the portal's reader.
  open_article: (action) => openArticle(action.data && action.data.article_id),
};

// The reader: the article's title and abstract, from the portal's API.
async function openArticle(id) {
  const reader = document.getElementById("reader");
  if (!id || !reader) return;
  reader.hidden = false;
  reader.querySelector("[data-article]").textContent = id;
  tray.updateContext({ article_id: id });
  const response = await fetch(`/example-api/articles/${encodeURIComponent(id)}`);
  if (!response.ok) return;
  const article = await response.json();
  reader.querySelector("[data-title]").textContent = article.title;
  reader.querySelector("[data-meta]").textContent = `${article.authors} · ${article.journal}, ${article.year}`;
  reader.querySelector("[data-abstract]").textContent = article.abstract;
}

// The open report as it stands: what the assistant adds (articles, fields) shows here. The
// assistant changes it from the tray, so the page reads it again every few seconds.
async function showReport() {
  if (!reportId || document.visibilityState !== "visible") return;
  const response = await fetch(`/example-api/reports/${reportId}`);
  if (!response.ok) return;
  const report = await response.json();
  const articles = document.getElementById("report-articles");
  articles.querySelector(".empty").hidden = report.articles.length > 0;
  articles.querySelector("ul").replaceChildren(
    ...report.articles.map((a) => Object.assign(document.createElement("li"), { textContent: `${a.id} (${a.year}): ${a.title}` })),
  );
  const fields = document.getElementById("report-fields");
  fields.querySelector(".empty").hidden = report.fields.length > 0;
  fields.querySelector("table").hidden = report.fields.length === 0;
  fields.querySelector("tbody").replaceChildren(
    ...report.fields.map((f) => {
      const row = document.createElement("tr");
      for (const text of [f.name, f.type, f.description]) row.append(Object.assign(document.createElement("td"), { textContent: text }));
      return row;
    }),
  );
}
if (document.getElementById("report-fields")) {
  void showReport();
  setInterval(showReport, 3000);
}
// A link to an article (the standalone UI's "Open in the reader") opens it in the reader.
const linked = new URLSearchParams(location.search).get("article");
if (linked) void openArticle(linked);

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

// The search filters, shared with the agent (tray.state): what the analyst sets here, the
// assistant's next search uses; a search the assistant runs ("... since 2022") sets them here.
const filters = document.getElementById("filters");
if (filters) {
  const year = filters.elements.year_from;
  const show = (state) => {
    const chosen = state.filters && state.filters.year_from;
    year.value = Number.isInteger(chosen) ? String(chosen) : "";
    filters.querySelector("[data-query]").textContent = state.query || "none yet";
  };
  show(tray.state);
  tray.addEventListener("agentstream:state", (event) => show(event.detail.state));
  year.addEventListener("change", () => {
    const chosen = year.value === "" ? null : Number(year.value);
    const state = tray.state;
    tray.state = { ...state, filters: { ...(state.filters || {}), year_from: chosen } };
  });
  filters.addEventListener("submit", (event) => event.preventDefault());
}
