/**
 * A body sent without Content-Length (chunked) is held to the same size limit as one that declares its length,
 * and the client can read the 413: the server reads the rest of the upload before answering, so a client still
 * sending sees the answer rather than a reset connection.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE, createUser } from "./helpers";

/** A JSON body of about `total` bytes in chunks (64 KiB by default), with no declared length; `sent()` says how much was taken. */
function chunked(total: number, chunkBytes = 64 * 1024) {
  const chunk = new Uint8Array(chunkBytes).fill(0x61);
  let sent = 0;
  let ended = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) controller.enqueue(new TextEncoder().encode('{"content":"'));
      if (sent >= total) {
        controller.enqueue(new TextEncoder().encode('"}'));
        controller.close();
        ended = true;
        return;
      }
      controller.enqueue(chunk);
      sent += chunk.length;
    },
  });
  return { body, ended: () => ended };
}

const put = (key: string, body: ReadableStream<Uint8Array>) =>
  SELF.fetch(`${BASE}/v1/brain/soul`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
    duplex: "half",
  } as RequestInit);

describe("oversize chunked bodies", () => {
  it("a 10 MB chunked body is read to its end and answered 413 with the error shape", async () => {
    const u = await createUser();
    const upload = chunked(10 * 1024 * 1024);
    const res = await put(u.key, upload.body);
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
    expect(body.error).toMatchObject({ code: "payload_too_large", request_id: res.headers.get("x-request-id") });
    expect(body.error.message).toMatch(/exceeds \d+ bytes/);
    // The whole upload was taken before the answer: nothing was left for the runtime to abort.
    expect(upload.ended()).toBe(true);
  });

  it("a small chunked body still goes through", async () => {
    const u = await createUser();
    const res = await put(u.key, chunked(1024, 64).body);
    expect(res.status).toBe(200);
  });
});
