/** The engram web app: sign in with an API key, then chat and the memory inspector. Hash routes, no framework. */
import { type Api, ApiError, connect, explain, ok } from "./api";
import { clearKey, storedKey, storeKey } from "./auth";
import { consentHandle } from "./consent-handle";
import { alertLine, fill, h } from "./dom";
import { start } from "./screens";

const app = document.getElementById("app") as HTMLElement;

/** Light / dark: follows the system unless the user picked one (a preference, not a secret). */
function applyTheme(): void {
  const t = localStorage.getItem("engram.theme");
  if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  else delete document.documentElement.dataset.theme;
}
function toggleTheme(): void {
  const dark = document.documentElement.dataset.theme ? document.documentElement.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
  localStorage.setItem("engram.theme", dark ? "light" : "dark");
  applyTheme();
}

function signIn(message = ""): void {
  const key = h("input", { id: "api-key", type: "password", autocomplete: "off", required: true, "aria-describedby": "key-help" });
  const remember = h("input", { id: "remember", type: "checkbox" });
  const error = alertLine(message);
  const form = h(
    "form",
    { class: "signin stack" },
    h("h1", null, "engram"),
    h("label", { for: "api-key" }, "API key"),
    key,
    h(
      "p",
      { id: "key-help", class: "muted" },
      "Your engram API key. It stays in this tab (sessionStorage) unless you tick “remember me”; signing out removes it.",
    ),
    h("label", null, remember, " Remember me on this device"),
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const api = connect(key.value.trim());
    try {
      await ok(api.GET("/v1/overview"));
      storeKey(key.value.trim(), remember.checked);
      await open(session(key.value.trim()));
    } catch (err) {
      // Here a 401 is the key just typed, not one that stopped working: say what to check, not to sign out.
      error.textContent =
        err instanceof ApiError && err.status === 401 ? "That API key was not accepted. Check that you pasted all of it, or ask for a new one." : explain(err);
      key.focus();
    }
  });
  fill(app, h("main", { id: "main" }, form));
  key.focus();
}

/** The API client of a signed-in user: a key that stops working signs them out, saying why. */
const session = (key: string) =>
  connect(key, () => {
    clearKey();
    location.hash = "";
    signIn("Your API key is no longer accepted (revoked or rotated). Sign in with a current key.");
  });

/** Opens the signed-in app. */
async function open(api: Api): Promise<void> {
  start(api, {
    signOut: () => {
      clearKey();
      location.hash = "";
      signIn("Signed out.");
    },
    toggleTheme,
  });
}

applyTheme();
const key = storedKey();
if (key) void open(session(key)).catch((err) => signIn(explain(err)));
else signIn(consentHandle(location.hash) ? "An app asks to connect to your engram: sign in to review it." : "");
