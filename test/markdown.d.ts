/** Documents are imported as text (Vite's `?raw`), so tests in workerd can check them against the code. */
declare module "*.md?raw" {
  const text: string;
  export default text;
}
