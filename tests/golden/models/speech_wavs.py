#!/usr/bin/env python3
"""Writes the golden speech model's inputs (tests/golden/models/speech/tone*.wav): synthetic
8 kHz 16-bit mono WAVs, so nothing here comes from a corpus. Tone i: 0.45 s of
  x(t) = 0.4 env(t) sin(2π f1 t) + 0.25 sin(2π f2 t + 0.3) + 0.01 u,  env = 0.5 + 0.5 sin(2π r t),
u uniform in [-1, 1) from the LCG s = (1103515245 s + 12345) mod 2^31 (seed 7 + i), quantised
round(32767 x). Deterministic: the same bytes on every run (Python's standard library only).
  python3 tests/golden/models/speech_wavs.py"""
import math
import os
import struct
import wave

TONES = [(180, 900, 2.0), (260, 1300, 3.5), (340, 700, 5.0), (120, 2100, 1.5), (420, 1600, 4.0), (220, 2900, 6.0)]
RATE, SECONDS = 8000, 0.45
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "speech")
for i, (f1, f2, r) in enumerate(TONES):
    s = 7 + i
    frames = bytearray()
    for n in range(int(RATE * SECONDS)):
        t = n / RATE
        s = (1103515245 * s + 12345) % 2 ** 31
        u = s / 2 ** 30 - 1
        env = 0.5 + 0.5 * math.sin(2 * math.pi * r * t)
        x = 0.4 * env * math.sin(2 * math.pi * f1 * t) + 0.25 * math.sin(2 * math.pi * f2 * t + 0.3) + 0.01 * u
        frames += struct.pack("<h", max(-32768, min(32767, round(32767 * x))))
    with wave.open(os.path.join(here, f"tone{i + 1}.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(bytes(frames))
