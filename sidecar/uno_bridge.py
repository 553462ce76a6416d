#!/usr/bin/python3
"""One long-lived LibreOffice, driven over UNO, for the sidecar (sidecar/office-process.ts).

Starts soffice.bin with its own profile under FOLDER, listening on a private pipe, warms it up, and converts
documents on request, one at a time. Node cannot speak UNO; this is the smallest bridge that can, using Debian's
python3-uno. Usage: uno_bridge.py SOFFICE_BIN FOLDER.

Protocol: stdout first says {"ready": true, "office_pid": N} once LibreOffice answers. Then each request is a JSON
line on stdin, {"name": file name, "size": N, "filter_data": {...}, "password": str | null, "landscape": bool,
"update_indexes": bool},
followed by the document's N bytes; each answer a JSON line, {"ok": true, "size": M} followed by the PDF's M
bytes, or {"ok": false, "kind": "unreadable" | "failed", "message": str}. The document and the PDF exist on disk
(FOLDER/job, a tmpfs inside the sandbox) only while that request runs. If LibreOffice dies the bridge exits
non-zero; when stdin closes it stops LibreOffice and exits.
"""
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile

import uno
from com.sun.star.connection import NoConnectException

# Generous: a LibreOffice making its first profile on a loaded 2-core machine has taken over a minute.
CONNECT_TIMEOUT_S = 180
# soffice.bin's exit code when it wants to be started again (after it first made a profile); oosplash and the
# soffice script would restart it, the bridge does it itself.
EXIT_RESTART = 81

# Defence in depth: macros off, linked content never updated, untrusted links blocked.
HARDENING = '''<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
'''

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


def reply(message, body=b''):
    out = sys.stdout.buffer
    out.write(json.dumps({**message, 'size': len(body)} if body else message).encode() + b'\n')
    if body:
        out.write(body)
    out.flush()


def connect(pipe, launch):
    """Launches LibreOffice (again after EXIT_RESTART) and connects; kills it when it never answers."""
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    office = launch()
    try:
        while True:
            if office.poll() == EXIT_RESTART:
                office = launch()
            elif office.poll() is not None:
                raise SystemExit(f'LibreOffice exited with {office.returncode} before accepting connections')
            try:
                context = resolver.resolve(f'uno:pipe,name={pipe};urp;StarOffice.ComponentContext')
                return context.ServiceManager.createInstanceWithContext('com.sun.star.frame.Desktop', context), office
            except NoConnectException:
                if time.monotonic() > deadline:
                    raise SystemExit(f'LibreOffice did not accept connections within {CONNECT_TIMEOUT_S} s')
                time.sleep(0.1)
    except BaseException:
        office.kill()
        raise


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
    """Refreshes tables of contents and other indexes, as Gotenberg does before exporting (text documents only).

    Called directly, not through hasattr(): pyuno answers hasattr by introspecting the document's types, which
    costs more than the call on every conversion."""
    indexes = document.getDocumentIndexes()
    for i in range(indexes.getCount()):
        indexes.getByIndex(i).update()


# Delimited text opens in Calc with these import options: separator, quote ("), UTF-8 (76), from line 1.
TEXT_IMPORT = {'.csv': '44,34,76,1', '.tsv': '9,34,76,1'}

# What LibreOffice may open a document as, by its extension. LibreOffice detects the type from the bytes and, when
# no filter of the named kind reads them, goes on to its other import filters: a DOCX cut short was opened as
# WordPerfect, an XLS cut short as CSV text, an HTML or text file named .docx as HTML or Text. The conversion then
# "succeeds" with a PDF of garbage, through a parser the caller never meant to reach. So a package (OOXML, ODF) must
# be opened by a package filter, and no other office format by a plain-text one.
PACKAGES = {'.docx', '.docm', '.dotx', '.dotm', '.xlsx', '.xlsm', '.xltx', '.xltm', '.pptx', '.pptm', '.ppsx', '.ppsm',
            '.potx', '.potm', '.odt', '.ott', '.ods', '.ots', '.odp', '.otp', '.odg'}
PACKAGE_FILTER = re.compile(r'2007|Office Open XML|^(writer|calc|impress|draw)8|^StarOffice XML')
TEXT_ALLOWED = {'.txt', '.csv', '.tsv', '.html', '.htm', '.xml', '.fodt', '.fods', '.fodp', '.fodg'}
TEXT_FILTER = re.compile(r'^Text\b')


def refused_filter(extension, filter_name):
    """Why LibreOffice's choice of import filter does not fit the extension, or None when it does."""
    if extension in PACKAGES and not PACKAGE_FILTER.search(filter_name):
        return f'LibreOffice could open it only as {filter_name or "an unknown format"}, not as a {extension[1:]} document: it is damaged or not what its name says'
    if extension not in TEXT_ALLOWED and TEXT_FILTER.search(filter_name):
        return f'LibreOffice could open it only as plain text ({filter_name}), not as a {extension[1:]} document: it is damaged or not what its name says'
    return None


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
        used = next((arg.Value for arg in document.getArgs() if arg.Name == 'FilterName'), '')
        refusal = refused_filter(extension, used)
        if refusal:
            return {'ok': False, 'kind': 'unreadable', 'message': refusal}
        export = next((f for service, f in EXPORT_FILTERS if document.supportsService(service)), None)
        if export is None:
            return {'ok': False, 'kind': 'unreadable', 'message': 'LibreOffice opened the file but it is not a document it can export to PDF'}
        if request.get('landscape'):
            make_landscape(document)
        if request.get('update_indexes') and export == 'writer_pdf_Export':
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


# One blank document of each kind saved as OOXML, loaded back and exported to PDF before the process says it is
# ready: loads Writer, Calc, Impress, their OOXML import and the PDF export, so the first real conversion costs
# what the next ones do.
WARM_UP = (
    ('swriter', 'MS Word 2007 XML', '.docx', 'writer_pdf_Export'),
    ('scalc', 'Calc MS Excel 2007 XML', '.xlsx', 'calc_pdf_Export'),
    ('simpress', 'Impress MS PowerPoint 2007 XML', '.pptx', 'impress_pdf_Export'),
)


def warm_up(desktop, folder):
    pdf = uno.systemPathToFileUrl(os.path.join(folder, 'warm-up.pdf'))
    for factory, save, extension, export in WARM_UP:
        saved = uno.systemPathToFileUrl(os.path.join(folder, 'warm-up' + extension))
        for url, target, store in ((f'private:factory/{factory}', saved, save), (saved, pdf, export)):
            document = desktop.loadComponentFromURL(url, '_blank', 0, (prop('Hidden', True),))
            try:
                document.storeToURL(target, (prop('FilterName', store),))
            finally:
                document.close(True)
        os.remove(uno.fileUrlToSystemPath(saved))
    os.remove(uno.fileUrlToSystemPath(pdf))


@contextlib.contextmanager
def running_office(soffice, folder, warm=True):
    """Starts soffice on its own profile and pipe, yields its Desktop once it answers, and stops it after."""
    profile = os.path.join(folder, 'profile')
    os.makedirs(os.path.join(profile, 'user'), mode=0o700, exist_ok=True)
    os.makedirs(os.path.join(folder, 'tmp'), mode=0o700, exist_ok=True)
    with open(os.path.join(profile, 'user', 'registrymodifications.xcu'), 'w') as settings:
        settings.write(HARDENING)
    pipe = f'edgefloor-{os.path.basename(folder)}-{os.getpid()}'

    def launch():
        return subprocess.Popen(
            [soffice, f'-env:UserInstallation={uno.systemPathToFileUrl(profile)}', f'--accept=pipe,name={pipe};urp;StarOffice.ComponentContext',
             '--headless', '--invisible', '--nologo', '--nodefault', '--nolockcheck', '--norestore', '--nofirststartwizard'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    desktop = office = None
    try:
        desktop, office = connect(pipe, launch)
        if warm:
            warm_up(desktop, folder)
        yield desktop, office
    finally:
        try:
            if desktop is not None:
                desktop.terminate()
        except Exception:
            pass
        try:
            if office is not None:
                office.wait(timeout=5)
        except Exception:
            office.kill()


def read_exactly(stream, size):
    data = stream.read(size)
    if len(data) != size:
        raise SystemExit('the sidecar closed the pipe in the middle of a document')
    return data


def convert_document(desktop, folder, request, document):
    """Writes the document to FOLDER/job, converts it, and removes both files whatever happens: the PDF's bytes."""
    job = os.path.join(folder, 'job')
    shutil.rmtree(job, ignore_errors=True)
    os.makedirs(job, mode=0o700)
    try:
        source = os.path.join(job, os.path.basename(request['name']) or 'document')
        with open(os.open(source, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), 'wb') as file:
            file.write(document)
        output = os.path.join(job, 'out.pdf')
        result = convert(desktop, {**request, 'input': source, 'output': output})
        if not result['ok']:
            # A LibreOffice killed while loading can make the load just fail: ask it something before
            # blaming the document, so a crash is never reported as an unreadable file.
            desktop.getFrames()
            return result, b''
        with open(output, 'rb') as file:
            return result, file.read()
    finally:
        shutil.rmtree(job, ignore_errors=True)


def main():
    soffice, folder = sys.argv[1:3]
    stdin = sys.stdin.buffer
    with running_office(soffice, folder) as (desktop, office):
        reply({'ready': True, 'office_pid': office.pid})
        for line in stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            document = read_exactly(stdin, request['size'])
            try:
                result, pdf = convert_document(desktop, folder, request, document)
            except Exception as error:  # the bridge to LibreOffice is gone: it crashed or was killed
                sys.stderr.write(f'LibreOffice stopped during a conversion: {type(error).__name__}: {error}\n')
                sys.exit(3)
            reply(result, pdf)


if __name__ == '__main__':
    main()
