import { explain } from "./api";
import { type Child, fill, h } from "./dom";

/** A panel that loads asynchronously and can reload itself; errors are shown in place, in words. */
export function asyncPanel(label: string, render: (reload: () => void) => Promise<Child>): HTMLElement {
  const root = h("section", { class: "panel", "aria-label": label });
  const reload = () => {
    root.setAttribute("aria-busy", "true");
    render(reload)
      .then((content) => fill(root, content))
      .catch((err) => fill(root, h("p", { class: "error", role: "alert" }, explain(err))))
      .finally(() => root.setAttribute("aria-busy", "false"));
  };
  reload();
  return root;
}
