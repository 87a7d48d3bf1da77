// The page's own events, so that modules learn of each other's changes without importing each other:
// "point" (the current point), "session" (signed in or out), "own-position", "stream-open",
// "stream:<type>" for each event of the server's event stream, and a few more named where emitted.
const bus = new EventTarget();

export function emit(name, detail = null) {
  bus.dispatchEvent(new CustomEvent(name, { detail }));
}

export function on(name, handler) {
  bus.addEventListener(name, (event) => handler(event.detail));
}
