// The race's sounds, made on the spot with WebAudio (no sound files): a short tick for a move,
// a low buzz for a refusal, a rising three-note phrase for the finish. Only when the player
// turned them on (settings.js); the audio starts on their first sound, after a click or a key,
// as browsers require.

import { soundsOn } from "./settings.js";

const SOUNDS = {
  move: [{ frequency: 880, start: 0, length: 0.05, wave: "triangle" }],
  refusal: [{ frequency: 160, start: 0, length: 0.16, wave: "square" }],
  finish: [523, 659, 784].map((frequency, index) => ({ frequency, start: index * 0.12,
    length: 0.22, wave: "sine" })),
};
const VOLUME = 0.12;

let audio = null;

export function play(name) {
  if (!soundsOn() || !globalThis.AudioContext) return;
  audio ??= new AudioContext();
  const at = audio.currentTime;
  for (const { frequency, start, length, wave } of SOUNDS[name]) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.type = wave;
    tone.frequency.value = frequency;
    // A quick fade in and out: a tone cut off at full volume clicks.
    gain.gain.setValueAtTime(0, at + start);
    gain.gain.linearRampToValueAtTime(VOLUME, at + start + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + start + length);
    tone.connect(gain).connect(audio.destination);
    tone.start(at + start);
    tone.stop(at + start + length + 0.02);
  }
}
