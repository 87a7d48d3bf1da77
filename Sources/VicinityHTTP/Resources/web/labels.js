// Keeps the map readable: every pin's label, of every layer, is placed where it covers no other label, no
// pin and no map control and stays inside the map, or is left to the pin's title; labels are placed by
// priority (one's own, friends, votes, temples, then places nearest the view's centre first). A friend,
// vote or temple pin that would sit on a higher one, or on a higher label, is drawn beside it, joined to its
// true place by a short line, so that nothing hides a pin. Everything is read from the pins on the map, so
// every layer is handled by the one pass, run once per frame whatever asked for it.

// Higher wins a place for its label and is drawn above: map.js stacks the pins in this order too. The chosen
// point, a hollow ring, goes under every pin but places', so that what stands on it shows inside it.
export const RANK = { place: 1, point: 2, temple: 3, vote: 4, friend: 5, me: 6 };
// Pins that must stay in sight: never covered by a label, and moved aside rather than hidden by a pin.
const KEPT_IN_SIGHT = new Set(['me', 'friend', 'vote', 'temple']);
// The ones that move aside; one's own pin is never moved, places are too many to move and the chosen point
// is a ring drawn around whatever is there.
const MOVABLE = new Set(['friend', 'vote', 'temple']);
// Things rather than people: higher labels are placed without regard to them, and they move out of their way.
const GIVES_WAY = new Set(['vote', 'temple']);
// Between a dot and its label, and between a pin and one moved beside it: enough to tell them apart.
const GAP_PX = 4;
// A label this close to the map's edge would touch the frame.
const EDGE_PX = 2;
// Where a label goes, in the order tried: beside the dot reads most naturally, then above and below it, then
// at its corners. [horizontal, vertical]: where the label's box starts against the dot's.
const SIDES = [['after', 'middle'], ['before', 'middle'], ['centre', 'above'], ['centre', 'below'],
  ['after', 'above'], ['after', 'below'], ['before', 'above'], ['before', 'below']];
// How far out, in pin widths, a moved pin is looked for a free spot, and in how many directions on each ring.
const RINGS = 3;
const DIRECTIONS = 8;

let map = null;
let scheduled = false;

export function initLabels(leafletMap) {
  map = leafletMap;
  map.on('moveend zoomend resize', scheduleLabels);
  // A name in a script whose font comes late (Thai) is wider once drawn in it.
  document.fonts?.addEventListener('loadingdone', scheduleLabels);
}

// Asked for by whatever changes the pins (added, moved, relabelled); the work waits for the next frame.
export function scheduleLabels() {
  if (!map || scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    placeLabels();
  });
}

// One pass: undo the last placement, read every box at once, decide, then write, so that the page lays out
// twice, however many pins there are.
function placeLabels() {
  const started = performance.now();
  const container = map.getContainer();
  const pins = [...container.querySelectorAll('.leaflet-marker-pane .pin')].map(read).filter(Boolean);
  for (const pin of pins) reset(pin);
  const frame = container.getBoundingClientRect();
  const controls = [...container.querySelectorAll('.leaflet-control')].map((control) => control.getBoundingClientRect());
  const centre = { x: (frame.left + frame.right) / 2, y: (frame.top + frame.bottom) / 2 };
  for (const pin of pins) measure(pin, centre);
  pins.sort((a, b) => RANK[b.kind] - RANK[a.kind] || a.fromCentre - b.fromCentre);
  const dots = []; // the pins kept in sight, where they are drawn
  const taken = [...controls]; // the labels placed, and the map's buttons
  const named = new Map(); // pin id → the rank of the pin that shows its name
  // Each pin in turn, highest first: its dot, then its label.
  for (const pin of pins) {
    if (MOVABLE.has(pin.kind)) moveAside(pin, dots, taken);
    if (KEPT_IN_SIGHT.has(pin.kind)) dots.push(pin.box);
    pin.placed = true;
    if (!pin.label) continue;
    if ((named.get(pin.id) ?? 0) > RANK[pin.kind]) continue; // a temple's name is on its temple pin already
    pin.place = choose(pin, pins, taken, frame);
    if (pin.place) {
      taken.push(pin.place.box);
      named.set(pin.id, RANK[pin.kind]);
    }
  }
  for (const pin of pins) write(pin);
  // The last pass's time, for the browser check to report (one entry, not one per pass).
  performance.clearMeasures('vicinity-labels');
  performance.measure('vicinity-labels', { start: started });
}

function read(element) {
  const kind = element.dataset.kind;
  if (!(kind in RANK)) return null;
  const body = element.querySelector('.pin-body');
  const dot = element.querySelector('.pin-dot');
  if (!body || !dot) return null;
  return { element, kind, id: element.dataset.id, body, dot, label: element.querySelector('.pin-label') };
}

function reset(pin) {
  pin.body.style.transform = '';
  if (pin.label) {
    pin.label.classList.remove('pin-label-crowded');
    pin.label.style.left = pin.label.style.top = pin.label.style.transform = '';
  }
}

function measure(pin, centre) {
  const box = pin.dot.getBoundingClientRect();
  pin.box = { left: box.left, top: box.top, right: box.right, bottom: box.bottom };
  // The label is placed from the body's corner: a temple's dot is turned, so its box is wider than the body.
  const body = pin.body.getBoundingClientRect();
  pin.corner = { left: body.left, top: body.top };
  pin.offset = { x: 0, y: 0 };
  pin.placed = false;
  pin.fromCentre = Math.hypot((box.left + box.right) / 2 - centre.x, (box.top + box.bottom) / 2 - centre.y);
  if (pin.label) {
    const label = pin.label.getBoundingClientRect();
    pin.size = { width: label.width, height: label.height };
  }
}

// A pin that lands on a higher pin, or on a label placed before it, goes to the nearest free spot: round the
// pin it met, as close as pins go, or round its own place away from the label, tried first in the direction
// it lies from what it met, so that it still points the right way.
function moveAside(pin, dots, taken) {
  const metDot = dots.find((box) => overlap(box, pin.box));
  const metLabel = taken.find((box) => overlap(box, pin.box));
  if (!metDot && !metLabel) return;
  const spot = freeSpot(pin.box, metDot ?? pin.box, metDot ?? metLabel, [...dots, ...taken]);
  if (!spot) return;
  pin.offset = spot;
  pin.box = shift(pin.box, spot);
}

function freeSpot(box, around, from, obstacles) {
  const width = box.right - box.left;
  const dx = centreOf(box).x - centreOf(from).x;
  const dy = centreOf(box).y - centreOf(from).y;
  // On the very same spot there is no direction to keep: to the left, as labels go to the right first.
  const away = Math.hypot(dx, dy) < 1 ? Math.PI : Math.atan2(dy, dx);
  for (let ring = 1; ring <= RINGS; ring += 1) {
    const reach = ring * (width + GAP_PX);
    for (let step = 0; step < DIRECTIONS; step += 1) {
      // 0, +1, -1, +2, -2, … steps of the circle from the first direction.
      const turn = Math.ceil(step / 2) * (step % 2 ? 1 : -1) * (2 * Math.PI / DIRECTIONS);
      const spot = { x: (centreOf(around).x - centreOf(box).x) + reach * Math.cos(away + turn),
                     y: (centreOf(around).y - centreOf(box).y) + reach * Math.sin(away + turn) };
      const moved = shift(box, spot);
      if (!obstacles.some((other) => overlap(other, moved))) return spot;
    }
  }
  return null;
}

// The first side where the label covers nothing (votes and temples still to come will move out of its way);
// else, for a pin drawn above others, the first side where it covers only pins below it that need not stay in
// sight (place dots, the chosen point's ring); else none.
function choose(pin, pins, taken, frame) {
  // A pin inside the chosen point's ring (the place chosen, or oneself there) is named outside the ring.
  const encircling = pins.find((other) => other.kind === 'point' && contains(other.box, centreOf(pin.box)));
  const anchor = encircling ? union(pin.box, encircling.box) : pin.box;
  const obstacles = pins.filter((other) => other !== pin && other !== encircling
    && (other.placed || !GIVES_WAY.has(other.kind)));
  const fits = (box, allowed) => inside(box, frame)
    && !taken.some((other) => overlap(other, box))
    && !obstacles.some((other) => !allowed(other) && overlap(other.box, box));
  const candidates = SIDES.map((side) => ({ side, box: beside(anchor, pin.size, side, frame) }));
  const strict = candidates.find(({ box }) => fits(box, () => false));
  if (strict || RANK[pin.kind] === RANK.place) return strict ?? null;
  return candidates.find(({ box }) => fits(box, (other) =>
    RANK[other.kind] < RANK[pin.kind] && !KEPT_IN_SIGHT.has(other.kind))) ?? null;
}

// A label above or below its dot that would run off the side slides back into the map as long as it still
// reaches over the dot (a long name over a pin near the edge of a phone's map).
function beside(dot, size, [horizontal, vertical], frame) {
  const { x, y } = centreOf(dot);
  let left = horizontal === 'after' ? dot.right + GAP_PX
    : horizontal === 'before' ? dot.left - GAP_PX - size.width
    : x - size.width / 2;
  const top = vertical === 'above' ? dot.top - GAP_PX - size.height
    : vertical === 'below' ? dot.bottom + GAP_PX
    : y - size.height / 2;
  if (vertical !== 'middle') {
    const slid = Math.max(frame.left + EDGE_PX, Math.min(left, frame.right - EDGE_PX - size.width));
    if (slid < dot.right && slid + size.width > dot.left) left = slid;
  }
  return { left, top, right: left + size.width, bottom: top + size.height };
}

function write(pin) {
  const { x, y } = pin.offset;
  const moved = x !== 0 || y !== 0;
  pin.body.style.transform = moved ? `translate(${x}px, ${y}px)` : '';
  leader(pin, moved);
  if (!pin.label) return;
  if (!pin.place) {
    pin.label.classList.add('pin-label-crowded');
    return;
  }
  // The label sits in the pin's body, moved with it.
  pin.label.style.left = `${pin.place.box.left - pin.corner.left - x}px`;
  pin.label.style.top = `${pin.place.box.top - pin.corner.top - y}px`;
  pin.label.style.transform = 'none';
}

// The line from a moved pin's true place to where it is drawn.
function leader(pin, moved) {
  let line = pin.element.querySelector('.pin-leader');
  if (!moved) {
    if (line) line.hidden = true;
    return;
  }
  if (!line) {
    line = document.createElement('span');
    line.className = 'pin-leader';
    line.setAttribute('aria-hidden', 'true');
    pin.element.prepend(line);
  }
  line.hidden = false;
  const { x, y } = pin.offset;
  line.style.width = `${Math.hypot(x, y)}px`;
  line.style.transform = `rotate(${Math.atan2(y, x)}rad)`;
}

function centreOf(box) {
  return { x: (box.left + box.right) / 2, y: (box.top + box.bottom) / 2 };
}

function shift(box, { x, y }) {
  return { left: box.left + x, top: box.top + y, right: box.right + x, bottom: box.bottom + y };
}

function inside(box, frame) {
  return box.left >= frame.left + EDGE_PX && box.right <= frame.right - EDGE_PX
    && box.top >= frame.top + EDGE_PX && box.bottom <= frame.bottom - EDGE_PX;
}

function contains(box, { x, y }) {
  return box.left <= x && x <= box.right && box.top <= y && y <= box.bottom;
}

function union(a, b) {
  return { left: Math.min(a.left, b.left), top: Math.min(a.top, b.top),
           right: Math.max(a.right, b.right), bottom: Math.max(a.bottom, b.bottom) };
}

function overlap(a, b) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}
