# Saves a document with a password, as LibreOffice's own "Save with
# password" does: python3 encrypt.py SOFFICE PROFILE_DIR IN OUT FILTER PASSWORD.
# Used by the conversion tests to make encrypted input (needs python3-uno).
import os, subprocess, sys, time

import uno
from com.sun.star.beans import PropertyValue


def prop(name, value):
    p = PropertyValue()
    p.Name, p.Value = name, value
    return p


soffice, profile, src, dst, filter_name, password = sys.argv[1:7]
pipe = "quire-encrypt-%d" % os.getpid()
office = subprocess.Popen([soffice, "--headless", "--invisible", "--norestore", "--nologo", "--nolockcheck",
                           "-env:UserInstallation=" + uno.systemPathToFileUrl(profile),
                           "--accept=pipe,name=%s;urp;" % pipe])
local = uno.getComponentContext()
resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
for _ in range(600):
    try:
        ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
        break
    except Exception:
        time.sleep(0.1)
else:
    sys.exit("soffice did not answer on its pipe")
desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(src), "_blank", 0, (prop("Hidden", True),))
if doc is None:
    sys.exit("soffice could not load " + src)
doc.storeToURL(uno.systemPathToFileUrl(dst), (prop("FilterName", filter_name), prop("Password", password)))
doc.close(True)
try:
    desktop.terminate()
except Exception:  # the bridge goes down with the office
    pass
office.wait(30)
