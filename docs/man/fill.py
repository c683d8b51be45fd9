#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Make a manual page from its template: @VERSION@, and sections made from
the programs themselves, so the pages never lag them:
  @KNOBS@    metaroce-ctl knobs --man (the knob table)
  @SIMKEYS@  metaroce-sim keys (every scenario key and its default)

fill.py TEMPLATE OUTPUT VERSION [PROGRAM]"""
import re
import subprocess
import sys

tmpl, out, version = sys.argv[1:4]
text = open(tmpl, encoding='utf-8').read().replace('@VERSION@', version)


def run(*args):
    return subprocess.run([sys.argv[4], *args], check=True,
                          capture_output=True, text=True).stdout


def roff(s):
    s = s.replace('\\', '\\e').replace('-', '\\-')
    return '\\&' + s


if '@KNOBS@' in text:
    text = text.replace('@KNOBS@\n', run('knobs', '--man'))
if '@SIMKEYS@' in text:
    items = []
    for line in run('keys').splitlines():
        m = re.match(r'^  (--[a-z0-9-]+)\s+(.*)$', line)
        if m:
            items.append('.TP\n.B %s\n%s\n' % (m.group(1).replace('-', '\\-'),
                                               roff(m.group(2))))
    if not items:
        sys.exit('fill.py: metaroce-sim keys listed no key')
    text = text.replace('@SIMKEYS@\n', ''.join(items))
with open(out, 'w', encoding='utf-8') as f:
    f.write(text)
