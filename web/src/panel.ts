import { explain } from "./api";
import { alertLine, type Child, fill, h } from "./dom";

/** A panel that loads asynchronously and can reload itself; errors are shown in place, in words. */
export function asyncPanel(label: string, render: (reload: () => void) => Promise<Child>): HTMLElement {
  const root = h("section", { class: "panel", "aria-label": label });
  const reload = () => {
    root.setAttribute("aria-busy", "true");
    render(reload)
      .then((content) => fill(root, content))
      .catch((err) => fill(root, errorLine(err)))
      .finally(() => root.setAttribute("aria-busy", "false"));
  };
  reload();
  return root;
}

/** What went wrong, in words (explain), as an alert. */
export const errorLine = (err: unknown, tag?: "p" | "span" | "li") => alertLine(explain(err), tag);
