# nohash.py: Python with no "#!" line, as 42% of public skills write it;
# it writes next to where it runs (the workspace)
import os, sys
open("made-by-nohash.txt", "w").write("x")
print("nohash-ok", sys.version_info[0], os.path.exists("made-by-nohash.txt"))
