#!/usr/bin/env python3
"""gen.py - deterministic test data for the strsearch benches.

    gen.py TEXT MIB PATTERNS NPAT [SEED]

TEXT: MIB MiB of English-like text (lines of words drawn with a Zipf-like skew from a
vocabulary of 20,000 made-up words); built from one 32 MiB block written repeatedly with
a different line order each time, so it is quick to make even for gigabytes.
PATTERNS: NPAT distinct words of the vocabulary (a mix of frequent and rare ones), one per
line. Standard library only.
"""
import random
import sys


def vocabulary(rng, n=20000):
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [26 - i for i in range(26)]
    words = set()
    while len(words) < n:
        words.add("".join(rng.choices(letters, weights, k=rng.randint(3, 11))))
    return sorted(words)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    text, mib, pats, npat = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    vocab = vocabulary(rng)
    zipf = [1.0 / (i + 1) for i in range(len(vocab))]
    block_words = rng.choices(vocab, zipf, k=(32 << 20) // 7)
    lines = [" ".join(block_words[i:i + 12]) for i in range(0, len(block_words), 12)]
    want = mib << 20
    with open(text, "w", encoding="ascii") as f:
        done = 0
        while done < want:
            rng.shuffle(lines)
            block = "\n".join(lines) + "\n"
            block = block[:want - done]
            f.write(block)
            done += len(block)
    # Every 7th pattern is frequent (from the top of the Zipf order), the rest uniform.
    chosen = []
    seen = set()
    while len(chosen) < min(npat, len(vocab)):
        i = rng.randrange(200) if len(chosen) % 7 == 0 else rng.randrange(len(vocab))
        if i not in seen:
            seen.add(i)
            chosen.append(vocab[i])
    with open(pats, "w", encoding="ascii") as f:
        f.write("\n".join(chosen) + "\n")


if __name__ == "__main__":
    main()
