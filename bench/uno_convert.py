#!/usr/bin/python3
"""bench/office's "warm UNO" baseline: one soffice kept running and driven over python3-uno directly.

No HTTP, no sandbox, no queue: the least a warm LibreOffice conversion can cost here, to set the sidecar against.
Usage: uno_convert.py PROFILE_DIR OUT_DIR. Prints {"ready": true} once LibreOffice answers, then reads one input
path a line from stdin, converts it to OUT_DIR/<name>.pdf and prints {"ok": true} or {"ok": false, "error": ...}.
"""
import json
import os
import subprocess
import sys
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

# The PDF export filter by the document's extension (the bench's fixtures only).
FILTERS = {
    '.docx': 'writer_pdf_Export', '.odt': 'writer_pdf_Export', '.rtf': 'writer_pdf_Export', '.doc': 'writer_pdf_Export',
    '.xlsx': 'calc_pdf_Export', '.ods': 'calc_pdf_Export', '.xls': 'calc_pdf_Export',
    '.pptx': 'impress_pdf_Export', '.odp': 'impress_pdf_Export', '.ppt': 'impress_pdf_Export',
}


def props(**values):
    result = []
    for name, value in values.items():
        p = PropertyValue()
        p.Name, p.Value = name, value
        result.append(p)
    return tuple(result)


def desktop_of(pipe, office):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    for _ in range(1800):
        if office.poll() is not None:
            sys.exit(f'soffice exited with {office.returncode}')
        try:
            remote = resolver.resolve(f'uno:pipe,name={pipe};urp;StarOffice.ComponentContext')
            return remote.ServiceManager.createInstanceWithContext('com.sun.star.frame.Desktop', remote)
        except NoConnectException:
            time.sleep(0.1)
    sys.exit('soffice did not answer within 180 s')


def main():
    profile, out = sys.argv[1:3]
    pipe = f'bench-uno-{os.getpid()}'
    office = subprocess.Popen(
        ['soffice', f'-env:UserInstallation={uno.systemPathToFileUrl(profile)}', f'--accept=pipe,name={pipe};urp;',
         '--headless', '--invisible', '--nologo', '--nodefault', '--norestore'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    desktop = desktop_of(pipe, office)
    print(json.dumps({'ready': True}), flush=True)
    try:
        for line in sys.stdin:
            source = line.strip()
            name, extension = os.path.splitext(os.path.basename(source))
            try:
                document = desktop.loadComponentFromURL(uno.systemPathToFileUrl(source), '_blank', 0, props(Hidden=True, ReadOnly=True))
                try:
                    target = uno.systemPathToFileUrl(os.path.join(out, name + '.pdf'))
                    document.storeToURL(target, props(FilterName=FILTERS[extension.lower()]))
                finally:
                    document.close(True)
                print(json.dumps({'ok': True}), flush=True)
            except Exception as error:
                print(json.dumps({'ok': False, 'error': f'{type(error).__name__}: {error}'}), flush=True)
    finally:
        try:
            desktop.terminate()
        except Exception:
            pass
        office.wait(timeout=10)


if __name__ == '__main__':
    main()
