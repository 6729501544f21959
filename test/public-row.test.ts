import { describe, expect, it } from "vitest";
import { snakeRow } from "../src/db/public-row";
import { type EventRow, publicEvent } from "../src/memory/events";

describe("snakeRow", () => {
  it("shows the named columns only, in the order named, under snake_case names", () => {
    const row = { id: "r1", userId: "usr_secret", eventType: "fact", sourceMetadata: { a: 1 }, createdAt: 5 };
    expect(JSON.stringify(snakeRow(row, ["id", "createdAt", "eventType", "sourceMetadata"]))).toBe(
      '{"id":"r1","created_at":5,"event_type":"fact","source_metadata":{"a":1}}',
    );
  });

  it("keeps an API answer byte for byte (an observation event)", () => {
    const row: EventRow = {
      id: "evt_1",
      userId: "usr_1",
      eventType: "learned_fact",
      content: "User likes tea",
      sourceMetadata: { via: "test" },
      idempotencyKey: "k#0",
      idempotencyBody: "hash",
      status: "processed",
      processed: true,
      attempts: 1,
      error: null,
      createdAt: 10,
      processedAt: 20,
    };
    expect(JSON.stringify(publicEvent(row))).toBe(
      '{"id":"evt_1","event_type":"learned_fact","content":"User likes tea","source_metadata":{"via":"test"},"status":"processed",' +
        '"attempts":1,"error":null,"created_at":10,"processed_at":20}',
    );
  });
});
