#!/usr/bin/python3
"""One long-lived LibreOffice, driven over UNO, for the sidecar (sidecar/libreoffice.ts).

Starts soffice with its own profile, listening on a private pipe, and converts documents on request, one at a
time. Node cannot speak UNO; this is the smallest bridge that can, using Debian's python3-uno.

Protocol: JSON lines. stdout first says {"ready": true, "office_pid": N} once LibreOffice answers, then one line
per request read from stdin: {"input": path, "output": path, "filter_data": {...}, "password": str | null,
"landscape": bool, "update_indexes": bool} -> {"ok": true} or {"ok": false, "kind": "unreadable" | "failed", "message": str}.
If LibreOffice dies the bridge exits non-zero; when stdin closes it stops LibreOffice and exits.
"""
import contextlib
import json
import os
import re
import subprocess
import sys
import time
import zipfile

import uno
from com.sun.star.connection import NoConnectException

CONNECT_TIMEOUT_S = 60

# The PDF export filter of each document kind, by the service the loaded document supports.
EXPORT_FILTERS = (
    ('com.sun.star.text.GenericTextDocument', 'writer_pdf_Export'),
    ('com.sun.star.sheet.SpreadsheetDocument', 'calc_pdf_Export'),
    ('com.sun.star.presentation.PresentationDocument', 'impress_pdf_Export'),
    ('com.sun.star.drawing.DrawingDocument', 'draw_pdf_Export'),
)


def prop(name, value):
    p = uno.createUnoStruct('com.sun.star.beans.PropertyValue')
    p.Name = name
    p.Value = value
    return p


def reply(message):
    sys.stdout.write(json.dumps(message) + '\n')
    sys.stdout.flush()


def connect(pipe, office):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    while True:
        if office.poll() is not None:
            raise SystemExit(f'LibreOffice exited with {office.returncode} before accepting connections')
        try:
            context = resolver.resolve(f'uno:pipe,name={pipe};urp;StarOffice.ComponentContext')
            return context.ServiceManager.createInstanceWithContext('com.sun.star.frame.Desktop', context)
        except NoConnectException:
            if time.monotonic() > deadline:
                raise SystemExit(f'LibreOffice did not accept connections within {CONNECT_TIMEOUT_S} s')
            time.sleep(0.1)


def make_landscape(document):
    """Every page style in use turned to landscape (text documents and spreadsheets; slides keep their shape)."""
    if not hasattr(document, 'StyleFamilies') or not document.StyleFamilies.hasByName('PageStyles'):
        return
    styles = document.StyleFamilies.getByName('PageStyles')
    for name in styles.ElementNames:
        style = styles.getByName(name)
        if style.IsLandscape:
            continue
        width, height = style.Width, style.Height
        style.IsLandscape = True
        style.Width, style.Height = max(width, height), min(width, height)


# The PDF export settings a request may set (LibreOffice's FilterData names), and their types.
FILTER_TYPES = {
    'PageRange': str, 'SelectPdfVersion': int, 'PDFUACompliance': bool,
    'ExportFormFields': bool, 'AllowDuplicateFieldNames': bool, 'ExportBookmarks': bool,
    'ExportBookmarksToPDFDestination': bool, 'ExportPlaceholders': bool, 'ExportNotes': bool, 'ExportNotesPages': bool,
    'ExportOnlyNotesPages': bool, 'ExportNotesInMargin': bool, 'ConvertOOoTargetToPDFTarget': bool,
    'ExportLinksRelativeFsys': bool, 'ExportHiddenSlides': bool, 'IsSkipEmptyPages': bool, 'IsAddStream': bool,
    'SinglePageSheets': bool, 'FirstPageOnLeft': bool, 'ResizeWindowToInitialPage': bool, 'CenterWindow': bool,
    'OpenInFullScreenMode': bool, 'DisplayPDFDocumentTitle': bool, 'HideViewerMenubar': bool, 'HideViewerToolbar': bool,
    'HideViewerWindowControls': bool, 'UseTransitionEffects': bool, 'UseLosslessCompression': bool,
    'ReduceImageResolution': bool, 'InitialView': int, 'InitialPage': int, 'Magnification': int, 'Zoom': int,
    'PageLayout': int, 'OpenBookmarkLevels': int, 'Quality': int, 'MaxImageResolution': int,
    'Watermark': str, 'TiledWatermark': str, 'WatermarkColor': int, 'WatermarkFontHeight': int,
    'WatermarkRotateAngle': int, 'WatermarkFontName': str,
}


def filter_data(values):
    return uno.Any('[]com.sun.star.beans.PropertyValue', tuple(prop(k, FILTER_TYPES[k](v)) for k, v in values.items() if k in FILTER_TYPES))


MAX_WORKSHEET_BYTES = 128 << 20


def without_scroll_position(path):
    """A copy of an .xlsx/.xlsm whose worksheets forget where they were scrolled, or None when nothing changes.

    SinglePageSheets starts each page at the sheet's saved top-left cell, dropping the rows above it (Gotenberg's
    issue 1222, fixed there the same way). A workbook with an entry over MAX_WORKSHEET_BYTES is left as it is.
    """
    if os.path.splitext(path)[1].lower() not in ('.xlsx', '.xlsm'):
        return None
    changed = False
    target = os.path.join(os.path.dirname(path), 'unscrolled' + os.path.splitext(path)[1].lower())
    try:
        with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, 'w', zipfile.ZIP_DEFLATED) as out:
            for info in source.infolist():
                if info.file_size > MAX_WORKSHEET_BYTES:
                    raise ValueError('entry too large to rewrite')
                data = source.read(info)
                if info.filename.startswith('xl/worksheets/') and info.filename.lower().endswith('.xml') and b'topLeftCell' in data:
                    data = re.sub(rb' topLeftCell="[^"]*"', b'', data)
                    changed = True
                out.writestr(info, data)
    except Exception:
        return None
    return target if changed else None


def update_indexes(document):
    """Refreshes tables of contents and other indexes, as Gotenberg does before exporting."""
    if hasattr(document, 'getDocumentIndexes'):
        indexes = document.getDocumentIndexes()
        for i in range(indexes.getCount()):
            indexes.getByIndex(i).update()


# Delimited text opens in Calc with these import options: separator, quote ("), UTF-8 (76), from line 1.
TEXT_IMPORT = {'.csv': '44,34,76,1', '.tsv': '9,34,76,1'}


class OfficeGone(Exception):
    pass


def gone(error):
    """Whether an error means the connection to LibreOffice is lost (it crashed or was killed)."""
    return 'Disposed' in type(error).__name__ or 'disposed' in str(error).lower()


def convert(desktop, request):
    load = [
        prop('Hidden', True),
        prop('ReadOnly', True),
        # Linked content is never updated, macros never run: a document cannot make LibreOffice fetch a URL or
        # read a local file while it is converted.
        prop('UpdateDocMode', 0),  # com.sun.star.document.UpdateDocMode.NO_UPDATE
        prop('MacroExecutionMode', 0),  # com.sun.star.document.MacroExecMode.NEVER_EXECUTE
    ]
    extension = os.path.splitext(request['input'])[1].lower()
    if extension in TEXT_IMPORT:
        load += [prop('FilterName', 'Text - txt - csv (StarCalc)'), prop('FilterOptions', TEXT_IMPORT[extension])]
    if request.get('password'):
        load.append(prop('Password', request['password']))
    source = request['input']
    if (request.get('filter_data') or {}).get('SinglePageSheets'):
        source = without_scroll_position(source) or source
    url = uno.systemPathToFileUrl(source)
    try:
        document = desktop.loadComponentFromURL(url, '_blank', 0, tuple(load))
    except Exception as error:  # IllegalArgumentException, IOException: the document cannot be opened
        if gone(error):
            raise OfficeGone(str(error)) from error
        document = None
        reason = getattr(error, 'Message', '') or type(error).__name__
    else:
        reason = 'LibreOffice could not open the document'
    if document is None:
        return {'ok': False, 'kind': 'unreadable', 'message': reason}
    try:
        export = next((f for service, f in EXPORT_FILTERS if document.supportsService(service)), None)
        if export is None:
            return {'ok': False, 'kind': 'unreadable', 'message': 'LibreOffice opened the file but it is not a document it can export to PDF'}
        if request.get('landscape'):
            make_landscape(document)
        if request.get('update_indexes'):
            update_indexes(document)
        store = [prop('FilterName', export), prop('FilterData', filter_data(request.get('filter_data') or {}))]
        uno.invoke(document, 'storeToURL', (uno.systemPathToFileUrl(request['output']), tuple(store)))
        return {'ok': True}
    except Exception as error:
        if gone(error):
            raise OfficeGone(str(error)) from error
        return {'ok': False, 'kind': 'failed', 'message': getattr(error, 'Message', '') or str(error) or type(error).__name__}
    finally:
        try:
            document.close(True)
        except Exception:
            pass


@contextlib.contextmanager
def running_office(soffice, profile, pipe):
    """Starts soffice on its own profile and pipe, yields its Desktop once it answers, and stops it after."""
    office = subprocess.Popen(
        [soffice, f'-env:UserInstallation={uno.systemPathToFileUrl(profile)}', f'--accept=pipe,name={pipe};urp;StarOffice.ComponentContext',
         '--headless', '--invisible', '--nologo', '--nodefault', '--nolockcheck', '--norestore', '--nofirststartwizard'],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    desktop = None
    try:
        desktop = connect(pipe, office)
        yield desktop, office
    finally:
        try:
            if desktop is not None:
                desktop.terminate()
        except Exception:
            pass
        try:
            office.wait(timeout=5)
        except Exception:
            office.kill()


def main():
    soffice, profile, pipe = sys.argv[1:4]
    with running_office(soffice, profile, pipe) as (desktop, office):
        reply({'ready': True, 'office_pid': office.pid})
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            try:
                result = convert(desktop, request)
                if not result['ok']:
                    # A LibreOffice killed while loading can make the load just fail: ask it something before
                    # blaming the document, so a crash is never reported as an unreadable file.
                    desktop.getFrames()
                reply(result)
            except Exception as error:  # the bridge to LibreOffice is gone: it crashed or was killed
                sys.stderr.write(f'LibreOffice stopped during a conversion: {type(error).__name__}: {error}\n')
                sys.exit(3)


if __name__ == '__main__':
    os.environ.setdefault('HOME', '/tmp')
    main()
