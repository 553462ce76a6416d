#!/usr/bin/python3
"""Saves small source documents in Office formats with one LibreOffice, for test/setup/office-documents.ts.

One soffice over UNO (started as sidecar/uno_bridge.py starts it) instead of one `soffice --convert-to` per format:
a LibreOffice start costs more than all the saves together, and only UNO can save with a password.
Usage: office_documents.py SOFFICE PROFILE_DIR JOBS_JSON (the profile goes in PROFILE_DIR's parent's `profile`), where JOBS_JSON lists
{"input", "output", "filter", "password"?, "import_filter"?, "import_options"?}.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sidecar's bridge
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'sidecar'))
import uno  # noqa: E402
from uno_bridge import prop, running_office  # noqa: E402


def save(desktop, job):
    load = [prop('Hidden', True)]
    if job.get('import_filter'):
        load += [prop('FilterName', job['import_filter']), prop('FilterOptions', job.get('import_options', ''))]
    document = desktop.loadComponentFromURL(uno.systemPathToFileUrl(job['input']), '_blank', 0, tuple(load))
    if document is None:
        raise SystemExit(f'LibreOffice could not open {job["input"]}')
    try:
        store = [prop('FilterName', job['filter']), prop('Overwrite', True)]
        if job.get('password'):
            store.append(prop('Password', job['password']))
        document.storeToURL(uno.systemPathToFileUrl(job['output']), tuple(store))
    finally:
        document.close(True)


def main():
    soffice, profile, jobs = sys.argv[1:4]
    with running_office(soffice, os.path.dirname(profile), warm=False) as (desktop, _), open(jobs) as file:
        for job in json.load(file):
            save(desktop, job)


if __name__ == '__main__':
    main()
