// Where walking directions are worth offering: a link to walking directions to a temple across an ocean is
// no help to anyone.

// About an hour on foot at 5 km/h: further than that, people take a bus or a car (from CSULB, the nearest
// temple Vicinity knows is 13,314 km away, in Thailand).
export const WALKING_LIMIT_M = 5000;

export function walkable(metres) {
  return Number.isFinite(metres) && metres <= WALKING_LIMIT_M;
}
