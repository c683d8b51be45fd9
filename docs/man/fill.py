#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Make a manual page from its template: @VERSION@, and @KNOBS@ from the
knob table itself (metaroce-ctl knobs --man), so the page never lags it.

fill.py TEMPLATE OUTPUT VERSION [METAROCE-CTL]"""
import subprocess
import sys

tmpl, out, version = sys.argv[1:4]
text = open(tmpl, encoding='utf-8').read().replace('@VERSION@', version)
if '@KNOBS@' in text:
    knobs = subprocess.run([sys.argv[4], 'knobs', '--man'], check=True,
                           capture_output=True, text=True).stdout
    text = text.replace('@KNOBS@\n', knobs)
with open(out, 'w', encoding='utf-8') as f:
    f.write(text)
