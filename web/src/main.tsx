import { render } from "preact";
import { App } from "./app/App";
import "./styles.css";

// In a task of its own: loading the app's code and drawing its first page are then two short
// tasks, not one long one that keeps the page from answering.
setTimeout(() => render(<App />, document.getElementById("app")!));
