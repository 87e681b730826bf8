// The player's settings, kept in localStorage: whether moves are animated, and whether the race
// makes sounds. Animation is off by default when the system asks for reduced motion
// (prefers-reduced-motion). Sounds are off by default: a page that beeps unasked, in an office
// or on a train, is a page people close; a player who wants them turns them on once.

const ANIMATION_KEY = "patience-race.animation";
const SOUNDS_KEY = "patience-race.sounds";

function reducedMotion() {
  return Boolean(globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches);
}

export function animationOn() {
  try {
    const chosen = localStorage.getItem(ANIMATION_KEY);
    if (chosen !== null) return chosen === "on";
  } catch {
    // no storage
  }
  return !reducedMotion();
}

export function setAnimation(on) {
  try {
    localStorage.setItem(ANIMATION_KEY, on ? "on" : "off");
  } catch {
    // no storage: the choice lasts until the page is left
  }
}

export function soundsOn() {
  try {
    return localStorage.getItem(SOUNDS_KEY) === "on";
  } catch {
    return false;
  }
}

export function setSounds(on) {
  try {
    localStorage.setItem(SOUNDS_KEY, on ? "on" : "off");
  } catch {
    // no storage: the choice lasts until the page is left
  }
}
