/**
 * Every stored string goes through the one cleaner (invisible characters out, secrets redacted): project names
 * and descriptions, connection and API-key names, observation metadata keys and values. And a 400 names the field
 * that is wrong without repeating a key the client chose, which may be a pasted secret.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { INVISIBLE } from "./adversarial/forgery";
import { api, createUser } from "./helpers";
import { userD1 } from "./shard-helpers";

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

const json = async <T>(res: Response) => (await res.json()) as T;

describe("secrets in stored names", () => {
  it("project names and descriptions, connection names and API-key names keep no token", async () => {
    const u = await createUser();
    const project = await api(u.key, "POST", "/v1/projects", { name: `deploy ${TOKEN}`, description: `CI uses ${TOKEN} to push` });
    expect(project.status).toBe(201);
    const connection = await api(u.key, "POST", "/v1/connections", { name: `GitHub ${TOKEN}` });
    expect(connection.status).toBe(201);
    const key = await api(u.key, "POST", "/v1/keys", { name: `laptop ${TOKEN}` });
    expect(key.status).toBe(201);
    const stored = [
      await (await api(u.key, "GET", "/v1/projects")).text(),
      await (await api(u.key, "GET", "/v1/connections")).text(),
      await (await api(u.key, "GET", "/v1/keys")).text(),
      JSON.stringify(await (await userD1(u.id)).prepare("SELECT name, description FROM projects WHERE user_id = ?").bind(u.id).all()),
      JSON.stringify(await (await userD1(u.id)).prepare("SELECT name FROM connections WHERE user_id = ?").bind(u.id).all()),
      JSON.stringify(await env.DB.prepare("SELECT name FROM api_keys WHERE user_id = ?").bind(u.id).all()),
    ].join("\n");
    expect(stored).not.toContain(TOKEN);
    expect(stored).toContain("deploy [REDACTED]");
    expect(stored).toContain("GitHub [REDACTED]");
    expect(stored).toContain("laptop [REDACTED]");
  });
});

describe("observation metadata", () => {
  it("keys and values lose NUL, right-to-left, zero-width and tag characters, and secrets are redacted", async () => {
    const u = await createUser();
    const res = await api(u.key, "POST", "/v1/observations", {
      observations: [
        {
          type: "learned_fact",
          content: "User deploys on Fridays.",
          source_metadata: {
            source: "sync\u0000job",
            "no\u200Bte": "right\u202Eto\u2066left\u2069 and \u{E0041}\u{E0042}tags",
            api_key: "hunter2-but-longer",
            remote: `https://x:${TOKEN}@github.com/acme/app`,
            "\u200B": "a key of nothing but an invisible character",
          },
        },
      ],
    });
    expect(res.status).toBe(202);
    const { events } = await json<{ events: { id: string; source_metadata: Record<string, unknown> }[] }>(res);
    const row = await (await userD1(u.id))
      .prepare("SELECT source_metadata FROM context_events WHERE id = ?")
      .bind(events[0]?.id)
      .first<{ source_metadata: string }>();
    for (const metadata of [events[0]?.source_metadata, JSON.parse(row?.source_metadata ?? "{}")]) {
      expect(metadata).toEqual({
        source: "syncjob",
        note: "righttoleft and tags",
        api_key: "[REDACTED]",
        remote: "https://x:[REDACTED]@github.com/acme/app",
      });
    }
    expect(row?.source_metadata).not.toMatch(INVISIBLE);
  });
});

describe("validation errors", () => {
  it("name the field that is wrong without repeating a key the client chose", async () => {
    const u = await createUser();
    const cases: [string, string, unknown][] = [
      // A record key over its length limit: the path would hold the key.
      ["PATCH", "/v1/memory/scaffold", { scaffold: { [`token ${TOKEN} ${"x".repeat(100)}`]: 1 } }],
      // An unknown field of a strict body: the message would name it.
      ["POST", "/v1/projects", { name: "Shop", [TOKEN]: "x" }],
      ["POST", "/v1/connections", { name: "Jira", learned_info: { [`${TOKEN}${"y".repeat(100)}`]: 1 } }],
    ];
    for (const [method, path, body] of cases) {
      const res = await api(u.key, method, path, body);
      expect(res.status).toBe(400);
      const { error } = await json<{ error: { code: string; message: string } }>(res);
      expect(error.code).toBe("invalid_request");
      expect(error.message).not.toContain("ghp_");
      expect(error.message).toMatch(/\(a key\)/);
    }
  });
});
