/**
 * The smallest value that satisfies a JSON Schema of the subset structured outputs and tool inputs use
 * (objects with required properties, arrays, primitives, enum/const, anyOf, local $ref). The offline model
 * answers a structured-output request it has no rule for with it, and fills a client tool's input.
 */
type Schema = { [k: string]: unknown };

const isSchema = (v: unknown): v is Schema => !!v && typeof v === "object" && !Array.isArray(v);

export function schemaInstance(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isSchema(schema) || depth > 32) return null;
  if (typeof schema.$ref === "string" && isSchema(root)) {
    const name = schema.$ref.replace(/^#\/(\$defs|definitions)\//, "");
    const defs = (root.$defs ?? root.definitions) as Schema | undefined;
    return schemaInstance(defs?.[name], root, depth + 1);
  }
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0] ?? null;
  const variants = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(variants)) return schemaInstance(variants[0], root, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const props = isSchema(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return Object.fromEntries(required.map((k) => [k, schemaInstance(props[k], root, depth + 1)]));
    }
    case "array":
      return typeof schema.minItems === "number" && schema.minItems > 0 ? [schemaInstance(schema.items, root, depth + 1)] : [];
    case "string":
      return "";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}
