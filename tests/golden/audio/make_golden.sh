#!/usr/bin/env bash
# Regenerates the WAV files of tests/golden/audio (see README.md there) with SoX 14.4.2 and the
# Python 3 standard library, then the expected features with fbank_reference.py (NumPy).
#   apt-get install sox python3-numpy; bash tests/golden/audio/make_golden.sh
# The output is deterministic: the same bytes on every run.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
raw="-t raw -e signed-integer -b 16 -c 1 -L"

# ramp16_11025.wav: these 16 int16 samples, little-endian, 11025 Hz, plain 44-byte PCM header.
python3 -c '
import struct, sys
v = [-32768, -32767, -16384, -1, 0, 1, 2, 100, 1000, 8192, 16384, 32767, -100, -1000, 12345, -12345]
sys.stdout.buffer.write(struct.pack("<16h", *v))' > "$tmp/ramp.raw"
sox $raw -r 11025 "$tmp/ramp.raw" -t wavpcm ramp16_11025.wav

# synth8k.wav: 0.3 s (2400 samples) at 8 kHz of a deterministic speech-like signal.
python3 -c '
import math, struct, sys
out, state = [], 12345
for n in range(2400):
    t = n / 8000.0
    env = 0.5 + 0.5 * math.sin(2 * math.pi * 3.3 * t)
    s = (0.35 * env * math.sin(2 * math.pi * 220 * t) + 0.2 * math.sin(2 * math.pi * 1375 * t + 0.5)
         + 0.1 * math.sin(2 * math.pi * 2900 * t))
    state = (1103515245 * state + 12345) % 2**31          # glibc-style LCG, uniform noise
    s += 0.02 * (state / 2**30 - 1.0)
    out.append(max(-32768, min(32767, round(s * 32767))))
sys.stdout.buffer.write(struct.pack("<%dh" % len(out), *out))' > "$tmp/synth.raw"
sox $raw -r 8000 "$tmp/synth.raw" -t wavpcm synth8k.wav

# Formats engram must refuse, all converted from ramp16_11025.wav (-D: no dither).
sox -D ramp16_11025.wav -t wavpcm stereo.wav channels 2
sox -D ramp16_11025.wav -t wavpcm -e unsigned-integer -b 8 pcm8.wav
sox -D ramp16_11025.wav -b 24 pcm24.wav
sox -D ramp16_11025.wav -e floating-point -b 32 float32.wav
sox -D ramp16_11025.wav -t wavpcm -e u-law ulaw.wav
sox -D ramp16_11025.wav -e ima-adpcm ima_adpcm.wav
sox -D ramp16_11025.wav -t au not_riff.wav                  # Sun/NeXT .au bytes (".snd") under a .wav name
sox -D ramp16_11025.wav -t wavpcm zero_samples.wav trim 0 0  # header with an empty data chunk
head -c 50 ramp16_11025.wav > truncated.wav                 # data chunk declares 32 bytes, 6 present
: > empty.wav                                               # 0 bytes
# hostile.wav: ramp16_11025.wav with the data chunk size (bytes 40..43) set to 0x7ffffff0.
python3 -c '
import struct
b = bytearray(open("ramp16_11025.wav", "rb").read())
assert b[36:40] == b"data"
b[40:44] = struct.pack("<I", 0x7FFFFFF0)
open("hostile.wav", "wb").write(bytes(b))'

/usr/bin/python3 fbank_reference.py
