// The floor under every figure: one unauthenticated request with one D1 query, and one authenticated
// read (API key lookup + one query), through `wrangler dev`'s local proxy.
const now = () => performance.now();

export default {
  name: "Request floor (wrangler dev + local D1)",
  target: "none: context for the other figures",
  targets: {},
  description: "`healthz_ms`: GET /healthz (one D1 query). `authed_read_ms`: GET /v1/sessions?limit=1 (key lookup + one query).",
  runs: 200,
  warmup: 20,
  async setup(h) {
    return { user: await h.createUser() };
  },
  async sample(h, state) {
    let t0 = now();
    await (await fetch(`${h.url}/healthz`)).text();
    const healthz = now() - t0;
    t0 = now();
    await (await h.api(state.user.key, "GET", "/v1/sessions?limit=1")).text();
    return { healthz_ms: healthz, authed_read_ms: now() - t0 };
  },
};
