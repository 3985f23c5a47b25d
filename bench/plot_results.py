#!/usr/bin/env python3
# Render the tables recorded in bench/RESULTS.md to PNG (issue 18): nothing is measured here,
# every point comes from a recorded table, so the plots always match the record.
#
#   python3 bench/plot_results.py [--results bench/RESULTS.md] [--out DIR]
#
# Writes into DIR (default bench/plots, created when missing), one file per figure:
#   gpunetio_rx_threads.png  RX Mpps against engine threads, per packet size, softdpu (device
#                            memory) beside the bare ring (bare-gen), latest gpunetio_rx table
#   gpunetio_rx_size.png     RX Gbit/s against packet size at each thread count, with the
#                            PCIe H2D ceiling, latest gpunetio_rx table
#   gpunetio_tx.png          TX Mpps per case against the 64-frame copy peer, latest table
#   urom_cmd_ratios.png      the urom_cmd goal ratios (round trip / am_lat one-way, rate /
#                            am_bw) of every recorded row over time, with the goal lines
# and prints each file it wrote. A file is overwritten only when this script wrote it (its PNG
# carries the marker below); anything else in DIR is left alone and the figure is skipped with
# a message. Exit status 0, 1 when a table it needs is missing or malformed, 2 for bad usage,
# 77 when matplotlib is missing (Debian: python3-matplotlib; scripts/install-deps installs it).
# SPDX-License-Identifier: BSD-3-Clause
import argparse
import os
import re
import sys
from datetime import datetime

MARK = 'softdpu bench/plot_results.py'


def tables_after(lines, heading_re):
    """[(heading, header cells, rows of cells)] for every '### ' heading matching heading_re,
    the first markdown table after it (before the next heading)."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith('### ') and re.search(heading_re, lines[i]):
            head = lines[i][4:].strip()
            j = i + 1
            while j < len(lines) and not lines[j].startswith('|') and not lines[j].startswith('#'):
                j += 1
            if j < len(lines) and lines[j].startswith('|'):
                cols = [c.strip() for c in lines[j].strip().strip('|').split('|')]
                rows = []
                k = j + 2
                while k < len(lines) and lines[k].startswith('|'):
                    rows.append([c.strip() for c in lines[k].strip().strip('|').split('|')])
                    k += 1
                out.append((head, cols, rows))
                i = k
                continue
        i += 1
    return out


def num(cell):
    """The first number in a cell ('9.621 / 4.93' -> 9.621); None for '-' or no number."""
    m = re.search(r'-?\d+(?:\.\d+)?', cell.replace(',', ''))
    return float(m.group(0)) if m else None


def nums(cell):
    return [float(x) for x in re.findall(r'-?\d+(?:\.\d+)?', cell.replace(',', ''))]


def col(cols, prefix):
    for k, c in enumerate(cols):
        if c.startswith(prefix):
            return k
    raise KeyError(prefix)


def ours(path):
    """Whether an existing file was written by this script (its PNG text carries MARK)."""
    try:
        with open(path, 'rb') as f:
            return f.read(8) == b'\x89PNG\r\n\x1a\n' and MARK.encode() in f.read(1 << 16)
    except OSError:
        return False


def save(plt, fig, out_dir, name, written, skipped):
    path = os.path.join(out_dir, name)
    if os.path.lexists(path) and not ours(path):
        skipped.append(path)
        print('plot_results: %s exists and was not written by this script: left alone' % path,
              file=sys.stderr)
        plt.close(fig)
        return
    fig.savefig(path, dpi=110, metadata={'Software': MARK})
    plt.close(fig)
    written.append(path)


def plot_rx(plt, table, out_dir, written, skipped):
    head, cols, rows = table
    c_size, c_thr = col(cols, 'size'), col(cols, 'thr')
    c_sd, c_bare = col(cols, 'softdpu dev mem'), col(cols, 'bare-gen')
    c_pcie = col(cols, 'PCIe ceil')
    data = {}
    for r in rows:
        size, thr = int(num(r[c_size])), int(num(r[c_thr]))
        sd = nums(r[c_sd])  # Mpps / Gbit/s
        data.setdefault(size, []).append((thr, sd[0], sd[1], num(r[c_bare]), num(r[c_pcie])))
    if not data:
        raise ValueError('gpunetio_rx table without rows')
    sizes = sorted(data)
    fig, axes = plt.subplots(1, len(sizes), figsize=(3.2 * len(sizes), 3.4), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        pts = sorted(data[size])
        thr = [p[0] for p in pts]
        ax.plot(thr, [p[1] for p in pts], 'o-', label='softdpu (device memory)')
        ax.plot(thr, [p[3] for p in pts], 's--', label='bare ring (bare-gen)')
        ax.set_title('%d B' % size)
        ax.set_xlabel('engine threads')
        ax.set_xticks(thr)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel('Mpps')
    axes[0][0].legend(fontsize=7)
    fig.suptitle('GPU RX: ' + head, fontsize=7)
    fig.tight_layout()
    save(plt, fig, out_dir, 'gpunetio_rx_threads.png', written, skipped)

    fig, ax = plt.subplots(figsize=(6, 4))
    threads = sorted({p[0] for s in sizes for p in data[s]})
    for t in threads:
        xs = [s for s in sizes if any(p[0] == t for p in data[s])]
        ax.plot(xs, [next(p[2] for p in data[s] if p[0] == t) for s in xs], 'o-',
                label='softdpu, %d thr' % t)
    ax.plot(sizes, [data[s][0][4] * s * 8 / 1000 for s in sizes], 'k:',
            label='PCIe H2D ceiling')
    ax.set_xscale('log', base=2)
    ax.set_yscale('log')
    ax.set_xlabel('packet size (bytes)')
    ax.set_ylabel('Gbit/s')
    ax.grid(alpha=0.3, which='both')
    ax.legend(fontsize=7)
    ax.set_title('GPU RX throughput: ' + head, fontsize=7)
    fig.tight_layout()
    save(plt, fig, out_dir, 'gpunetio_rx_size.png', written, skipped)


def plot_tx(plt, table, out_dir, written, skipped):
    head, cols, rows = table
    c_case, c_sd = col(cols, 'case'), col(cols, 'softdpu Mpps')
    c_peer = col(cols, '64-frame copy')
    cases = [r[c_case] for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(cases)), 4))
    xs = range(len(cases))
    ax.bar([x - 0.2 for x in xs], [num(r[c_sd]) for r in rows], 0.4, label='softdpu')
    ax.bar([x + 0.2 for x in xs], [num(r[c_peer]) for r in rows], 0.4,
           label='64-frame copy peer')
    ax.set_xticks(list(xs))
    ax.set_xticklabels(cases, rotation=60, ha='right', fontsize=6)
    ax.set_ylabel('Mpps')
    ax.grid(alpha=0.3, axis='y')
    ax.legend(fontsize=7)
    ax.set_title('GPU TX: ' + head, fontsize=7)
    fig.tight_layout()
    save(plt, fig, out_dir, 'gpunetio_tx.png', written, skipped)


def plot_urom_cmd(plt, lines, out_dir, written, skipped):
    rows = []
    for ln in lines:
        m = re.match(r'\| (\d{4}-\d\d-\d\d \d\d:\d\d) \|', ln)
        if not m or 'round trip' in ln:
            continue
        cells = [c.strip() for c in ln.strip().strip('|').split('|')]
        if len(cells) < 11 or 'am_lat' in ln:
            continue
        # the unflushed-submission rate (column 15) exists since 2026-12-05 21:00
        batched = num(cells[14]) if len(cells) > 14 else None
        rows.append((datetime.strptime(m.group(1), '%Y-%m-%d %H:%M'), nums(cells[5])[0],
                     num(cells[10]), batched))
    if not rows:
        raise ValueError('no urom_cmd rows')
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r[0] for r in rows], [r[1] for r in rows], 'o-',
            label='round trip / am_lat one-way (goal <= 2.5)')
    ax.plot([r[0] for r in rows], [r[2] for r in rows], 's-',
            label='rate / am_bw 64 B (goal >= 0.8; 0.5 before issue 18)')
    brows = [r for r in rows if r[3] is not None]
    if brows:
        ax.plot([r[0] for r in brows], [r[3] for r in brows], '^',
                label='rate, unflushed submissions / am_bw 64 B')
    ax.axhline(2.5, color='C0', ls=':')
    ax.axhline(0.8, color='C1', ls=':')
    ax.set_yscale('log')
    ax.set_ylabel('ratio (median)')
    ax.grid(alpha=0.3, which='both')
    ax.legend(fontsize=7)
    ax.set_title('UROM command path against ucx_perftest, recorded rows', fontsize=8)
    fig.autofmt_xdate()
    fig.tight_layout()
    save(plt, fig, out_dir, 'urom_cmd_ratios.png', written, skipped)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description='plot the tables of bench/RESULTS.md')
    ap.add_argument('--results', default=os.path.join(here, 'RESULTS.md'))
    ap.add_argument('--out', default=os.path.join(here, 'plots'))
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError as e:
        print('SKIP: no matplotlib (Debian: python3-matplotlib): %s' % e)
        return 77
    try:
        with open(args.results, encoding='utf-8') as f:
            lines = f.read().split('\n')
    except OSError as e:
        print('plot_results: %s' % e, file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    written, skipped = [], []
    try:
        rx = tables_after(lines, r'^### gpunetio_rx \d')
        tx = tables_after(lines, r'^### gpunetio_tx \d')
        if not rx or not tx:
            raise ValueError('no gpunetio_rx / gpunetio_tx table')
        plot_rx(plt, rx[-1], args.out, written, skipped)
        plot_tx(plt, tx[-1], args.out, written, skipped)
        plot_urom_cmd(plt, lines, args.out, written, skipped)
    except (KeyError, ValueError, IndexError, TypeError) as e:
        print('plot_results: %s: a table is not as expected: %r' % (args.results, e),
              file=sys.stderr)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == '__main__':
    sys.exit(main())
