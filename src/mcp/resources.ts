/**
 * Reading a resource by its URI: the first capability resource whose URI template matches it reads it, with the
 * template's variables percent-decoded (list entries encode them). A URI nothing matches, a malformed one, and one
 * naming something the user does not have are all the same "not found" to the client.
 */
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { McpResource, McpScope } from "../core/mcp-resource";

export type ResourceText = { uri: string; mimeType: string; text: string };

/** Resources are fixed for the life of the isolate: each template is parsed once. */
const templates = new WeakMap<McpResource, UriTemplate>();

function templateOf(resource: McpResource): UriTemplate {
  let template = templates.get(resource);
  if (!template) {
    template = new UriTemplate(resource.uriTemplate);
    templates.set(resource, template);
  }
  return template;
}

export const isTemplate = (resource: McpResource) => UriTemplate.isTemplate(resource.uriTemplate);

export async function readResource(resources: readonly McpResource[], scope: McpScope, uri: string): Promise<ResourceText | null> {
  for (const resource of resources) {
    let vars: Record<string, string>;
    try {
      const matched = templateOf(resource).match(uri);
      if (!matched) continue;
      vars = Object.fromEntries(Object.entries(matched).map(([k, v]) => [k, decodeURIComponent(Array.isArray(v) ? v.join(",") : v)]));
    } catch {
      return null; // a URI too long to match, or a malformed percent-escape
    }
    const text = await resource.read(scope, vars);
    return text === null ? null : { uri, mimeType: resource.mimeType, text };
  }
  return null;
}
