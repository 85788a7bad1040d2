#!/usr/bin/python3
"""Reference log-mel features of synth8k.wav for tests/data/audio_test.cc.

An independent float64 NumPy re-implementation of Kaldi's compute-fbank-feats recipe (Kaldi
src/feat/feature-window.cc ProcessWindow / FeatureWindowFunction, src/feat/mel-computations.cc
MelBanks, src/feat/feature-functions.cc DeltaFeatures) with snip_edges=true, dither=0,
use_energy=false, samples scaled to [-1, 1) (int16 / 32768), log(max(e, 1e-10)); the WAV is read
with Python's own `wave` module (not libsndfile) and the FFT is numpy.fft.rfft (not kissfft).
Writes fbank_default.txt and fbank_options.txt. Run: /usr/bin/python3 fbank_reference.py
"""
import wave

import numpy as np


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64)
    return x / 32768.0, rate


def mel(f):
    return 1127.0 * np.log(1.0 + np.asarray(f, dtype=np.float64) / 700.0)


def window(kind, n):
    a = 2 * np.pi / (n - 1)
    i = np.arange(n)
    if kind == "povey":
        return (0.5 - 0.5 * np.cos(a * i)) ** 0.85
    if kind == "hamming":
        return 0.54 - 0.46 * np.cos(a * i)
    if kind == "hann":
        return 0.5 - 0.5 * np.cos(a * i)
    return np.ones(n)


def fbank(x, rate, win_ms=25, hop_ms=10, preemph=0.97, remove_dc=True, kind="povey", bins=23,
          low=20.0, high=0.0, floor=1e-10, delta_order=0, delta_window=2, cmvn="none"):
    W, H = int(round(rate * win_ms / 1000)), int(round(rate * hop_ms / 1000))
    nfft = 1
    while nfft < W:
        nfft *= 2
    T = 0 if len(x) < W else 1 + (len(x) - W) // H
    hi = high if high > 0 else rate / 2 + high
    lo_m, hi_m = mel(low), mel(hi)
    d = (hi_m - lo_m) / (bins + 1)
    bin_mel = mel(np.arange(nfft // 2 + 1) * rate / nfft)
    fb = np.zeros((bins, nfft // 2 + 1))
    for m in range(bins):
        left, center, right = lo_m + m * d, lo_m + (m + 1) * d, lo_m + (m + 2) * d
        for k, bm in enumerate(bin_mel):
            if left < bm < right:
                fb[m, k] = (bm - left) / (center - left) if bm <= center else (right - bm) / (right - center)
    w = window(kind, W)
    out = np.zeros((T, bins))
    for t in range(T):
        f = x[t * H:t * H + W].copy()
        if remove_dc:
            f -= f.mean()
        if preemph != 0:
            f[1:] = f[1:] - preemph * f[:-1]
            f[0] -= preemph * f[0]
        f *= w
        p = np.abs(np.fft.rfft(f, nfft)) ** 2
        out[t] = np.log(np.maximum(fb @ p, floor))
    if delta_order > 0:
        scales = [np.array([1.0])]
        norm = sum(2.0 * n * n for n in range(1, delta_window + 1))
        for _ in range(delta_order):
            # Kaldi's loop cur[j + N + k] += j * prev[k], j = -N..N, is this full convolution.
            scales.append(np.convolve(scales[-1], np.arange(-delta_window, delta_window + 1)) / norm)
        blocks = [out]
        for s in scales[1:]:
            off = len(s) // 2
            y = np.zeros_like(out)
            for t in range(T):
                for j, c in enumerate(s):
                    y[t] += c * out[min(max(t + j - off, 0), T - 1)]
            blocks.append(y)
        out = np.concatenate(blocks, axis=1)
    if cmvn != "none":
        out = out - out.mean(axis=0)
        if cmvn == "mean_variance":
            out = out / np.sqrt(out.var(axis=0))
    return out


def write(path, header, feats, frames):
    with open(path, "w") as f:
        for line in header:
            f.write("# " + line + "\n")
        f.write("frames %d dim %d\n" % feats.shape)
        for t in frames:
            f.write("%d %s\n" % (t, " ".join("%.6f" % v for v in feats[t])))


x, rate = read_wav("synth8k.wav")
a = fbank(x, rate)
write("fbank_default.txt",
      ["fbank_reference.py on synth8k.wav: Kaldi defaults (povey, preemphasis 0.97, remove_dc,",
       "25/10 ms, 23 bins, 20 Hz..Nyquist), no deltas, no CMVN. Line: frame, then 23 log-mel values."],
      a, range(a.shape[0]))
b = fbank(x, rate, kind="hamming", bins=40, low=0.0, high=-200.0, remove_dc=False, delta_order=2,
          cmvn="mean_variance")
write("fbank_options.txt",
      ["fbank_reference.py on synth8k.wav: hamming, 40 bins, 0..3800 Hz (high_freq -200), no DC",
       "removal, delta_order 2 (window 2), CMVN mean_variance. Line: frame, then 120 values."],
      b, [0, 1, 2, 13, 25, 26, 27])
