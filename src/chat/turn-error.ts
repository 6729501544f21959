/**
 * How a turn's model loop fails: one error carrying what the turn kept before the failure, so the caller can put
 * history right without reading untyped properties off whatever was thrown.
 */
export class TurnError extends Error {
  override readonly name = "TurnError";

  /**
   * `cause`: the failure itself (a model error, an abort, a bug). `answered`: history already holds part of the
   * reply (a tool round, a paused server-tool turn, or the partial text of a stopped reply). `partial`: the text the
   * failed call had streamed.
   */
  constructor(
    override readonly cause: unknown,
    readonly answered: boolean,
    readonly partial = "",
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }

  /** Whatever a turn threw, as a TurnError: a failure from outside the loop has answered nothing. */
  static of(err: unknown): TurnError {
    return err instanceof TurnError ? err : new TurnError(err, false);
  }
}
