/**
 * How engram names a document it gives the model to cite (core/evidence.ts): the `source` of its `search_result`
 * block, `engram:<kind>:<id>` ("engram:fact:fct_..."). Written and read only through these two functions.
 */
export type EvidenceName = { kind: string; id: string };

const SOURCE = /^engram:([a-z_]+):(\S+)$/;

export const evidenceSource = (doc: EvidenceName) => `engram:${doc.kind}:${doc.id}`;

/** The kind and id a source names; null for a source that is not one of engram's documents. */
export function parseEvidenceSource(source: string): EvidenceName | null {
  const [, kind, id] = SOURCE.exec(source) ?? [];
  return kind && id ? { kind, id } : null;
}
