#!/usr/bin/env python3
"""Exhaustive check of the half-tile storers' hand-over (docs/gemm-notes.md, step 73), on a model of mbarriers.

Actors: the tile's two halves of consumer warps (H0, H1) and the storers, each one actor (an mbarrier's arrivals from
a group of threads are one arrival here). Each half runs `tiles` tiles of `ktiles` k-tiles; a k-tile's stage is freed
only when both halves have read it, so a half can be at most `stages` k-tiles ahead of the other. At each tile's end
a half waits for the staging, writes it (use 2n + h), and arrives on `staged`; the storers wait for each use in turn,
drain it and arrive. An mbarrier's phase k completes when its arrivals reach its count; a wait on parity p passes
while the current phase's parity differs from p (the phase of parity p, the last one of that parity, has completed).

Two hand-overs: `one` (the hung form: one `stored` barrier of two phases a tile, half 0 waiting with parity 1, half 1
with parity 0) and `two` (the prepared form: `half_stored` after use 2n, `tile_stored` after use 2n + 1, one phase a
tile each; half 0 waits on tile_stored with parity (n - 1) & 1, half 1 on half_stored with n & 1). Every
interleaving of the three actors is explored; reported: a half writing the staging before the storers drained the
use before it, the storers draining a use not (or no longer) in the staging, and states where no actor can move
before all are done (deadlock). usage: 2026-11-29-half-staging-protocol-model.py
"""
import itertools
import sys


def check(form, tiles, ktiles, stages):
    # A state: (p0, p1, s0, s1, d, staged_k, b1_k, b2_k, written, drained). p_h: k-tiles half h has done (its tile
    # n's staging comes after (n + 1) x ktiles of them); s_h: tiles it has staged; d: uses the storers have drained;
    # *_k: each barrier's current phase (b1: `stored` or `half_stored`, b2: `tile_stored`); written, drained: the
    # last use written into the staging and the last one drained.
    start = (0, 0, 0, 0, 0, 0, 0, 0, -1, -1)
    errors = set()
    seen = {start}
    todo = [start]
    total_uses = 2 * tiles

    def wait_ok(k, parity):
        return k % 2 != parity

    while todo:
        st = todo.pop()
        p0, p1, s0, s1, d, staged_k, b1_k, b2_k, written, drained = st
        moves = []
        for h in (0, 1):
            p, s, other = (p0, s0, p1) if h == 0 else (p1, s1, p0)
            if s == tiles:
                continue
            if p < (s + 1) * ktiles:  # computing tile s: one more k-tile if its stage is not more than `stages` ahead
                if p < other + stages:
                    moves.append(("k", h))
                continue
            # at tile s's staging: may it pass its wait?
            if form == "one":
                ok = wait_ok(b1_k, 1 if h == 0 else 0)
            else:
                ok = wait_ok(b2_k, (s - 1) & 1) if h == 0 else wait_ok(b1_k, s & 1)
            if ok:
                moves.append(("stage", h))
        if d < total_uses and wait_ok(staged_k, d & 1):
            moves.append(("drain", None))
        if not moves:
            if not (s0 == tiles and s1 == tiles and d == total_uses):
                errors.add(f"deadlock at {st}")
            continue
        for kind, h in moves:
            q = list(st)
            if kind == "k":
                q[h] += 1
            elif kind == "stage":
                use = 2 * q[2 + h] + h
                if drained != use - 1:
                    errors.add(f"half {h} writes use {use} while use {drained + 1} is not drained")
                q[8] = use
                q[2 + h] += 1
                q[5] += 1  # staged: one arrival completes a phase (the half's)
            else:  # the storers drain use d
                if written != d:
                    errors.add(f"storers drain use {d} with use {written} in the staging")
                q[9] = d
                if form == "one" or d % 2 == 0:
                    q[6] += 1  # stored, or half_stored
                else:
                    q[7] += 1  # tile_stored
                q[4] += 1
            t = tuple(q)
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return errors, len(seen)


def main():
    bad = 0
    for form in ("one", "two"):
        for ktiles, stages in itertools.product((1, 2, 3, 4, 6, 13), (3, 5)):
            errors, states = check(form, 4, ktiles, stages)
            print(f"{form}: {ktiles} k-tiles a tile, {stages} stages: {states} states, "
                  + (f"{len(errors)} faults, e.g. {sorted(errors)[0]}" if errors else "no fault"))
            bad += form == "two" and bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
