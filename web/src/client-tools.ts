/**
 * Tools the page itself provides: declared with every chat message, run in the browser when the model
 * calls them, and their results posted back so the turn resumes. Location asks the user first
 * (`needs_approval`): it is personal, and the browser's own permission prompt follows.
 */
export type ClientTool = {
  name: string;
  description: string;
  input_schema: { type: "object"; [key: string]: unknown };
  needs_approval?: boolean;
  run: () => Promise<string>;
};

const getLocation: ClientTool = {
  name: "get_location",
  description: "The user's current location (latitude, longitude, accuracy in metres) from their browser",
  input_schema: { type: "object", properties: {} },
  needs_approval: true,
  run: () =>
    new Promise((resolve, reject) => {
      if (!("geolocation" in navigator)) return reject(new Error("this browser has no geolocation"));
      navigator.geolocation.getCurrentPosition(
        (p) => resolve(JSON.stringify({ latitude: p.coords.latitude, longitude: p.coords.longitude, accuracy_m: Math.round(p.coords.accuracy) })),
        (e) => reject(new Error(e.code === e.PERMISSION_DENIED ? "the user did not allow location access" : e.message || "location unavailable")),
        { timeout: 15_000, maximumAge: 60_000 },
      );
    }),
};

const getTime: ClientTool = {
  name: "get_time",
  description: "The user's local date, time and time zone, from their device",
  input_schema: { type: "object", properties: {} },
  run: async () => {
    const now = new Date();
    return JSON.stringify({ local: now.toString(), iso: now.toISOString(), time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone });
  },
};

export const clientTools: readonly ClientTool[] = [getLocation, getTime];

/** What POST /v1/chat's `client_tools` takes: the declarations without the code. */
export const declarations = () => clientTools.map(({ run: _run, ...decl }) => decl);

export const clientTool = (name: string) => clientTools.find((t) => t.name === name);
