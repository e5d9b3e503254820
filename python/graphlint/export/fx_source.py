"""Where the user's code is: which frames are the user's (not torch's, the
standard library's or this exporter's), and how their files are written,
relative to the user's repository root. One `UserSource` per export: the
recorder, the preparation and the command line share it, so two exports in
one process (graphlint.check) never see each other's root."""

import importlib
import os
import sys
import sysconfig


def _package_dir(name):
    try:
        mod = importlib.import_module(name)
        return os.path.dirname(os.path.abspath(mod.__file__))
    except Exception:
        return None


# Frames in these directories are never the user's: torch itself, the Python
# standard library and graphlint (this exporter and the API that calls it:
# graphlint.check's own frames are not the line of a model defined in a
# notebook cell or by exec, which has no file).
_NOT_USER = [d for d in (_package_dir("torch"), _package_dir("functorch"), sysconfig.get_paths().get("stdlib"),
                         os.path.dirname(os.path.dirname(os.path.realpath(__file__)))) if d]
# Memos of pure functions of a file name / code object (not capture state).
_user_file_cache = {}
_positions_cache = {}


def is_user_file(filename):
    hit = _user_file_cache.get(filename)
    if hit is None:
        path = os.path.abspath(filename)
        hit = not filename.startswith("<") and not any(
            path.startswith(d + os.sep) for d in _NOT_USER)
        _user_file_cache[filename] = hit
    return hit


def repo_root(model_file):
    """The git top-level directory holding model_file, else its folder."""
    d = os.path.dirname(os.path.abspath(model_file))
    probe = d
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return d
        probe = parent


def frame_position(frame):
    """(line, 1-based column) of the instruction a frame is executing."""
    code = frame.f_code
    if hasattr(code, "co_positions"):  # Python 3.11+: columns are known
        pos = _positions_cache.get(code)
        if pos is None:
            pos = _positions_cache[code] = list(code.co_positions())
        i = frame.f_lasti // 2
        if 0 <= i < len(pos) and pos[i][0]:
            return pos[i][0], (pos[i][2] + 1) if pos[i][2] is not None else 0
    return frame.f_lineno, 0


class UserSource:
    """The user's repository root (None: the working directory) and the
    source locations written relative to it."""

    def __init__(self, root=None):
        self.root = root

    def display_path(self, filename):
        """Relative to the user's repository root when the file is inside it,
        absolute otherwise (library code such as transformers)."""
        path = os.path.abspath(filename)
        root = self.root or os.getcwd()
        if path.startswith(root + os.sep):
            return os.path.relpath(path, root)
        return path

    def user_location(self):
        """The innermost frame of user code calling this."""
        frame = sys._getframe(1)
        while frame is not None:
            if is_user_file(frame.f_code.co_filename):
                line, col = frame_position(frame)
                return {"file": self.display_path(frame.f_code.co_filename), "line": line, "col": col,
                        "function": frame.f_code.co_name, "function_line": frame.f_code.co_firstlineno}
            frame = frame.f_back
        return None

    def loc_from_stack_trace(self, trace):
        """The innermost user frame of a 'File "x.py", line N, in f' stack trace."""
        if not trace:
            return None
        best = None
        for line in trace.splitlines():
            line = line.strip()
            if line.startswith('File "'):
                try:
                    path, rest = line[6:].split('", line ', 1)
                    num, _, func = rest.partition(", in ")
                    if is_user_file(path):
                        best = {"file": self.display_path(path), "line": int(num), "col": 0, "function": func}
                except ValueError:
                    continue
        return best

    def exception_frame(self, exc):
        """The innermost frame of user code in an exception's traceback."""
        best, tb = None, exc.__traceback__
        while tb is not None:
            if is_user_file(tb.tb_frame.f_code.co_filename):
                best = {"file": self.display_path(tb.tb_frame.f_code.co_filename), "line": tb.tb_lineno, "col": 0,
                        "function": tb.tb_frame.f_code.co_name}
            tb = tb.tb_next
        return best

    def error_location(self, exc):
        """'file:line: ' of the innermost user frame of exc, else ''."""
        loc = self.exception_frame(exc)
        return f"{loc['file']}:{loc['line']}: " if loc else ""
