/** @jsxImportSource react */
// A small React app that embeds the tray through the package's React entry (built dist/,
// as an app installing @agentstream/chat would get it; React is this app's own).
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { AgentstreamChat } from "../../../dist/react.js";

const params = new URLSearchParams(location.search);
const api = params.get("api") ?? "";
const token = params.get("token") ?? "";
const log: string[] = ((window as unknown as { hostLog: string[] }).hostLog = []);

function Shop() {
  const [page, setPage] = useState<"billing" | "orders">("billing");
  return (
    <div>
      <nav>
        <button type="button" id="to-billing" onClick={() => setPage("billing")}>Billing</button>
        <button type="button" id="to-orders" onClick={() => setPage("orders")}>Orders</button>
      </nav>
      <h1 id="react-page">{page === "billing" ? "Billing" : "Orders"}</h1>
      <AgentstreamChat
        endpoint={api}
        getToken={() => token}
        context={{ page }}
        starterPrompts={["Which tools do you have?"]}
        clientActions={{ navigate: (action) => setPage((action.data as { url: string }).url === "/orders" ? "orders" : "billing") }}
        renderPayload={{
          sales_chart: (payload) => (
            <div className="react-chart" data-testid="react-chart">
              React chart: {(payload.data as { sales: number[] }).sales.join(" / ")}
            </div>
          ),
        }}
        onAction={(event) => log.push(`action ${event.detail.action}`)}
        onOpenChange={(open) => log.push(`open ${open}`)}
      />
    </div>
  );
}

createRoot(document.getElementById("root")!).render(<Shop />);
