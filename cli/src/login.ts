import { createInterface } from "node:readline/promises";
import { Api, ok, toCliError } from "./api.js";
import { CliError, type Command, EXIT, str } from "./command.js";
import { deleteConfig, loadConfig, normaliseUrl, saveConfig } from "./config.js";

async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

async function readAll(): Promise<string> {
  let data = "";
  process.stdin.setEncoding("utf8");
  for await (const chunk of process.stdin) data += chunk;
  return data.trim();
}

export const loginCommand: Command = {
  name: "login",
  summary: "Save the server URL and API key, after checking them against the server",
  usage: "login [--url URL] [--key KEY | --key-stdin]",
  details:
    "Without --key the key is read from stdin (piped) or asked for (terminal); prefer that over --key, which other local users can see in the process list. The config goes to ~/.engram/config.json with mode 0600. ENGRAM_URL and ENGRAM_API_KEY override it at run time.",
  options: {
    url: { type: "string", value: "URL", help: "Server URL, e.g. https://engram.example.workers.dev (default: ENGRAM_URL or the saved one)" },
    key: { type: "string", value: "KEY", help: "API key (see the details above)" },
    "key-stdin": { type: "boolean", help: "Read the API key from stdin" },
    json: { type: "boolean", help: "Machine-readable output" },
  },
  run: async (values) => {
    const { config } = await loadConfig();
    let url = str(values.url) ?? config.url;
    if (!url && process.stdin.isTTY) url = await ask("engram server URL: ");
    if (!url) throw new CliError("no server URL", EXIT.usage, "pass --url URL");
    url = normaliseUrl(url);
    let key = str(values.key);
    if (!key) key = process.stdin.isTTY && !values["key-stdin"] ? await ask("API key: ") : await readAll();
    if (!key) throw new CliError("no API key", EXIT.usage, "pass it on stdin or with --key");

    // An authenticated call: a wrong URL or a revoked key fails here, not in the first hook.
    const api = new Api({ url, apiKey: key }, 10_000);
    let keys: number;
    try {
      const res = await ok(api.client().GET("/v1/keys"));
      keys = res.keys?.length ?? 0;
    } catch (err) {
      throw toCliError(err);
    }
    const file = await saveConfig({ url, apiKey: key });
    if (values.json === true) process.stdout.write(`${JSON.stringify({ url, config_file: file, keys })}\n`);
    else process.stdout.write(`logged in to ${url}; saved to ${file}\nnext: engram install\n`);
    return EXIT.ok;
  },
};

export const logoutCommand: Command = {
  name: "logout",
  summary: "Forget the saved server URL and API key",
  usage: "logout",
  details: "Deletes ~/.engram/config.json. The key stays valid on the server (revoke it there); hooks installed in Claude Code stay until `engram uninstall`.",
  options: {},
  run: async () => {
    const existed = await deleteConfig();
    process.stdout.write(existed ? "logged out\n" : "not logged in\n");
    return EXIT.ok;
  },
};
