// The player's settings, kept in localStorage: for now whether moves are animated. Animation is
// off by default when the system asks for reduced motion (prefers-reduced-motion).

const ANIMATION_KEY = "patience-race.animation";

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
