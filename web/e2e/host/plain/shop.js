// The plain host pages' own script: what a team adds to its page, plus hooks the tests read.
window.hostLog = [];
const tray = document.querySelector("agentstream-chat");
tray.getToken = async () => {
  window.hostLog.push("token");
  return window.SHOP_TOKEN || null;
};
tray.updateContext({ page: document.body.dataset.page, shop_user: "ada" });
tray.clientActions = {
  navigate: (action) => window.hostLog.push(`navigate ${action.data.url}`),
};
tray.payloadRenderers = {
  sales_chart: (payload) => {
    const figure = document.createElement("figure");
    figure.className = "host-chart";
    const max = Math.max(...payload.data.sales);
    figure.innerHTML = `<figcaption>${payload.summary}</figcaption>`;
    payload.data.sales.forEach((value, i) => {
      const bar = document.createElement("div");
      bar.className = "bar";
      bar.style.width = `${(value / max) * 100}%`;
      bar.textContent = `${payload.data.months[i]} ${value}`;
      figure.append(bar);
    });
    return figure;
  },
};
tray.addEventListener("agentstream:action", (e) => window.hostLog.push(`action ${e.detail.action}`));
for (const tab of document.querySelectorAll("[data-tab]")) {
  tab.addEventListener("click", () => {
    for (const other of document.querySelectorAll("[data-tab]")) other.setAttribute("aria-selected", String(other === tab));
    tray.updateContext({ tab: tab.dataset.tab || null });
  });
}
// The host's own shortcuts: "/" searches, Escape clears the search.
document.addEventListener("keydown", (e) => {
  if (e.key === "/" && !(e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement)) {
    e.preventDefault();
    window.hostLog.push("shortcut /");
    document.getElementById("search").focus();
  }
  if (e.key === "Escape") window.hostLog.push("shortcut Escape");
});
