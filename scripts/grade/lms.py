#!/usr/bin/env python3
"""The LMS round trip of `gpulab grade`: an LMS's submissions export into the submissions layout, and
grades.csv back into a gradebook the LMS imports. Python 3, standard library only.

    lms.py import --lms canvas|moodle EXPORT.zip --out SUBMISSIONS_DIR [--students MAP.csv]
        Canvas "Download Submissions" zip (files <name>[_late]_<user id>_<submission id>_<file>) or Moodle
        "Download all submissions" zip (<Full Name>_<participant id>_assignsubmission_file_/<files>) into one
        entry per student in SUBMISSIONS_DIR: the student's one archive as it was uploaded (<key>.zip,
        <key>.tar.gz), else a folder <key>/ with every file they uploaded. <key> is the student's name in
        the export (Canvas: its login-or-name part; Moodle: the full name), kept as `gpulab grade` keeps
        names, with "-<id>" added when two students of the export share a name. MAP.csv (default:
        SUBMISSIONS_DIR/../lms-students.csv) maps each key to the LMS's id of the student.

    lms.py export --lms canvas|moodle --grades RESULTS/grades.csv --gradebook EXPORTED.csv
                  --assignment "NAME" --out IMPORT.csv [--students MAP.csv] [--points scaled|raw]
        Fills the assignment's column of the gradebook the LMS exported (Canvas: Grades > Export, a
        column "NAME (<assignment id>)"; Moodle: the assignment's grading worksheet, column "Grade")
        with each student's final_score (score without due dates), scaled to the assignment's points
        possible unless --points raw, and writes IMPORT.csv for the LMS's gradebook import. Students
        without a graded row keep their cell as exported (a blank cell changes nothing on import).
        MAP.csv defaults to lms-students.csv beside grades.csv's folder or in it.
"""

from __future__ import annotations

import argparse
import csv
import io
import pathlib
import re
import shutil
import sys
import unicodedata
import zipfile

ARCHIVES = (".tar.gz", ".tgz", ".zip", ".tar")
MAP_COLUMNS = ["student", "lms", "lms_id", "name", "submission_id", "late", "entry", "files"]


class Refusal(Exception):
    """Bad input: the message says what and how to fix it."""


# ---- names -------------------------------------------------------------------------------------


def plain_key(name: str) -> str:
    """A student key `gpulab grade` keeps as it is (grader/instructor/grade/submission.hpp, student_name): NFC, letters
    of any script, digits, spaces and -_.@+; anything else becomes '-'."""
    out = []
    for c in unicodedata.normalize("NFC", name).strip():
        if ord(c) < 0x80:
            out.append(c if c.isalnum() or c in " -_.@+" else "-")
        elif unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cn", "Cs", "Co"):
            out.append("-")
        else:
            out.append(c)
    key = "".join(out).lstrip(".")
    return key or "student"


def archive_suffix(file_name: str) -> str | None:
    lower = file_name.lower()
    return next((s for s in ARCHIVES if lower.endswith(s)), None)


def safe_parts(member: str) -> list[str] | None:
    """The member's path components, or None when it would leave the output folder."""
    parts = [p for p in member.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or member.startswith("/") or ".." in parts or re.match(r"^[A-Za-z]:", parts[0]):
        return None
    return parts


# ---- import ------------------------------------------------------------------------------------

CANVAS_FILE = re.compile(r"^(?P<name>.+?)(?P<late>_late)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$", re.IGNORECASE)
CANVAS_DUPLICATE = re.compile(r"^(?P<stem>.+)-(?P<n>\d+)(?P<ext>(\.tar)?\.[^.]+)$")  # "transpose-1.cu"
MOODLE_FOLDER = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_assign(?:submission|feedback)_(?P<plugin>[a-z]+)_?$")


class Student:
    def __init__(self, name: str, lms_id: str):
        self.name, self.lms_id = name, lms_id
        self.submission_id, self.late = "", False
        self.files: dict[str, zipfile.ZipInfo] = {}  # path inside the entry -> member


def canvas_students(export: zipfile.ZipFile, notes: list[str]) -> dict[str, Student]:
    students: dict[str, Student] = {}
    for info in export.infolist():
        if info.is_dir():
            continue
        base = info.filename.replace("\\", "/").rsplit("/", 1)[-1]
        m = CANVAS_FILE.match(base)
        if not m:
            notes.append(f"{info.filename}: not named <name>_<user id>_<submission id>_<file> (left out)")
            continue
        s = students.setdefault(m["uid"], Student(m["name"], m["uid"]))
        s.submission_id, s.late = m["sid"], s.late or bool(m["late"])
        s.files[m["file"]] = info
    for s in students.values():  # Canvas adds "-1" to a file uploaded again under the same name
        for original in list(s.files):
            d = CANVAS_DUPLICATE.match(original)
            plain = d and d["stem"] + d["ext"]
            if plain and plain not in s.files:
                s.files[plain] = s.files.pop(original)
    return students


def moodle_students(export: zipfile.ZipFile, notes: list[str]) -> dict[str, Student]:
    students: dict[str, Student] = {}
    for info in export.infolist():
        parts = safe_parts(info.filename)
        if parts is None:
            raise Refusal(f"{info.filename}: a path that leaves the export; is this Moodle's own zip?")
        if info.is_dir() or len(parts) < 2:
            if not info.is_dir():
                notes.append(f"{info.filename}: not in a <Full Name>_<id>_assignsubmission_file_ folder (left out)")
            continue
        m = MOODLE_FOLDER.match(parts[0])
        if not m:
            notes.append(f"{info.filename}: not in a <Full Name>_<id>_assignsubmission_file_ folder (left out)")
            continue
        if m["plugin"] != "file":
            notes.append(f"{info.filename}: an online text or feedback entry, not a file submission (left out)")
            continue
        s = students.setdefault(m["id"], Student(m["name"], m["id"]))
        s.files["/".join(parts[1:])] = info
    return students


def assign_keys(students: dict[str, Student]) -> dict[str, Student]:
    """Each student's key: their plain name, with "-<id>" for every student whose name another shares."""
    by_key: dict[str, list[Student]] = {}
    for s in students.values():
        by_key.setdefault(plain_key(s.name).casefold(), []).append(s)
    keyed = {}
    for same in by_key.values():
        for s in same:
            keyed[plain_key(s.name) + (f"-{s.lms_id}" if len(same) > 1 else "")] = s
    return keyed


def write_entry(export: zipfile.ZipFile, key: str, s: Student, out: pathlib.Path) -> str:
    """The student's entry in OUT: their one archive as uploaded, else a folder of their files."""
    if len(s.files) == 1:
        (name, info), = s.files.items()
        suffix = archive_suffix(name)
        if suffix:
            target = out / (key + suffix)
            with export.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            return target.name
    folder = out / key
    for name, info in s.files.items():
        parts = safe_parts(name)
        if parts is None:
            raise Refusal(f"{info.filename}: a path that leaves the student's folder")
        target = folder.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        with export.open(info) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return folder.name + "/"


def run_import(args) -> int:
    out = pathlib.Path(args.out)
    mapping = pathlib.Path(args.students) if args.students else out.resolve().parent / "lms-students.csv"
    try:
        export = zipfile.ZipFile(args.export)
    except (OSError, zipfile.BadZipFile) as e:
        raise Refusal(f"{args.export}: not a readable zip ({e}); give the zip the LMS downloaded")
    notes: list[str] = []
    with export:
        students = (canvas_students if args.lms == "canvas" else moodle_students)(export, notes)
        if not students:
            raise Refusal(f"{args.export}: no {args.lms} submission in it (is it the other LMS's export? --lms)")
        keyed = assign_keys(students)
        out.mkdir(parents=True, exist_ok=True)
        existing = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
        if existing and not args.force:
            raise Refusal(f"{out} is not empty ({', '.join(existing[:3])}...): import into a new folder, or --force")
        rows = []
        for key in sorted(keyed):
            s = keyed[key]
            entry = write_entry(export, key, s, out)
            rows.append({"student": key, "lms": args.lms, "lms_id": s.lms_id, "name": s.name,
                         "submission_id": s.submission_id, "late": "yes" if s.late else "",
                         "entry": entry, "files": ";".join(sorted(s.files))})
    mapping.parent.mkdir(parents=True, exist_ok=True)
    with open(mapping, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=MAP_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    for note in notes:
        print(f"lms.py: {note}", file=sys.stderr)
    late = sum(1 for r in rows if r["late"])
    print(f"lms.py: {len(rows)} students from {args.export} into {out} ({late} marked late by {args.lms}); "
          f"their {args.lms} ids: {mapping}")
    return 0


# ---- export ------------------------------------------------------------------------------------


def read_csv(path: pathlib.Path) -> list[list[str]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return list(csv.reader(f))
    except OSError as e:
        raise Refusal(f"{path}: cannot be read ({e.strerror})")


def find_mapping(args) -> pathlib.Path:
    if args.students:
        return pathlib.Path(args.students)
    results = pathlib.Path(args.grades).resolve().parent
    for candidate in (results / "lms-students.csv", results.parent / "lms-students.csv"):
        if candidate.exists():
            return candidate
    raise Refusal(f"no lms-students.csv in {results} or {results.parent}: give the one `lms.py import` wrote "
                  "with --students")


def graded_scores(grades: pathlib.Path, notes: list[str]) -> dict[str, tuple[float, float]]:
    """student -> (score that counts, maximum) for every graded or refused row; not graded rows are noted."""
    rows = read_csv(grades)
    if not rows or "student" not in rows[0] or "max_score" not in rows[0]:
        raise Refusal(f"{grades}: not a grades.csv of `gpulab grade` (no student and max_score columns)")
    header = rows[0]
    column = header.index("final_score") if "final_score" in header else header.index("score")
    out = {}
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        cell = dict(zip(header, row))
        if cell["status"] == "not graded" or row[column] == "":
            notes.append(f"{cell['student']}: not graded in {grades} ({cell['error']}); their cell is left as it was")
            continue
        out[cell["student"]] = (float(row[column]), float(cell["max_score"]))
    return out


def score_text(score: float, maximum: float, possible: str, points: str) -> str:
    if points == "scaled" and possible.strip() and maximum > 0:
        score = score / maximum * float(possible)
    return f"{round(score, 2):g}"


def canvas_column(header: list[str], assignment: str) -> int:
    wanted = assignment.strip()
    matches = [i for i, h in enumerate(header) if h.strip() == wanted or re.fullmatch(
        re.escape(wanted) + r" \(\d+\)", h.strip())]
    if len(matches) == 1:
        return matches[0]
    assignments = [h for h in header if re.search(r" \(\d+\)$", h.strip())]
    if not matches:
        raise Refusal(f'no column "{assignment} (<id>)" in the gradebook; its assignments: {", ".join(assignments)}')
    raise Refusal(f'several columns match "{assignment}": give it with its id, e.g. "{header[matches[0]]}"')


def export_canvas(book: list[list[str]], scores, ids: dict[str, str], args, notes) -> list[list[str]]:
    header = book[0]
    for required in ("Student", "ID", "SIS User ID", "SIS Login ID", "Section"):
        if required not in header:
            raise Refusal(f"{args.gradebook}: no {required} column; export the gradebook from Canvas (Grades > Export)")
    keep = [header.index(c) for c in ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")]
    column = canvas_column(header, args.assignment)
    out = [[header[i] for i in keep] + [header[column]]]
    possible = ""
    by_id = {v: k for k, v in ids.items()}
    for row in book[1:]:
        row = row + [""] * (len(header) - len(row))
        if row[0].strip() == "Points Possible":
            possible = row[column]
            out.append([row[i] for i in keep] + [possible])
            continue
        if not row[keep[1]].strip():  # Canvas's "(read only)" / "Manual Posting" rows name no student
            continue
        student = by_id.get(row[keep[1]].strip())
        cell = row[column]
        if student in scores:
            cell = score_text(*scores[student], possible, args.points)
        out.append([row[i] for i in keep] + [cell])
    return out


def export_moodle(book: list[list[str]], scores, ids: dict[str, str], args, notes) -> list[list[str]]:
    header = book[0]
    for required in ("Identifier", "Grade"):
        if required not in header:
            raise Refusal(f"{args.gradebook}: no {required} column; download the assignment's grading worksheet "
                          "(View all submissions > Download grading worksheet)")
    ident, grade = header.index("Identifier"), header.index("Grade")
    maximum = header.index("Maximum Grade") if "Maximum Grade" in header else None
    by_id = {v: k for k, v in ids.items()}
    out = [header]
    for row in book[1:]:
        row = row + [""] * (len(header) - len(row))
        participant = re.sub(r"\D", "", row[ident])  # "Participant 123456"
        student = by_id.get(participant)
        if student in scores:
            row[grade] = score_text(*scores[student], row[maximum] if maximum is not None else "", args.points)
        out.append(row)
    return out


def run_export(args) -> int:
    notes: list[str] = []
    mapping = find_mapping(args)
    ids = {}
    for row in csv.DictReader(io.StringIO(mapping.read_text(encoding="utf-8"))):
        if row.get("lms", args.lms) != args.lms:
            raise Refusal(f"{mapping} was written for {row['lms']}, not {args.lms}")
        ids[row["student"]] = row["lms_id"]
    scores = graded_scores(pathlib.Path(args.grades), notes)
    book = read_csv(pathlib.Path(args.gradebook))
    if not book:
        raise Refusal(f"{args.gradebook} is empty")
    out = (export_canvas if args.lms == "canvas" else export_moodle)(book, scores, ids, args, notes)
    unknown = sorted(set(scores) - set(ids))
    if unknown:
        notes.append(f"{len(unknown)} graded student(s) are not in {mapping}, so not in the gradebook: "
                     f"{', '.join(unknown[:5])}")
    placed = set(ids.values()) & {re.sub(r"\D", "", r[1 if args.lms == "canvas" else 0]) for r in book[1:] if r}
    missing = sorted(k for k, v in ids.items() if k in scores and v not in placed)
    if missing:
        notes.append(f"{len(missing)} graded student(s) have no row in {args.gradebook}: {', '.join(missing[:5])}")
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(out)
    for note in notes:
        print(f"lms.py: {note}", file=sys.stderr)
    filled = len([s for s in scores if s in ids and ids[s] in placed])
    print(f"lms.py: {filled} grades into {args.out} ({args.points} points); import it into {args.lms}'s gradebook")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    imp = commands.add_parser("import", help="an LMS's submissions zip into the submissions layout")
    imp.add_argument("export", help="the zip the LMS downloaded")
    imp.add_argument("--lms", choices=["canvas", "moodle"], required=True)
    imp.add_argument("--out", required=True, help="the submissions folder to write (new or empty)")
    imp.add_argument("--students", help="the key -> LMS id CSV (default: OUT/../lms-students.csv)")
    imp.add_argument("--force", action="store_true", help="write into a folder that is not empty")
    exp = commands.add_parser("export", help="grades.csv into the LMS's gradebook import")
    exp.add_argument("--lms", choices=["canvas", "moodle"], required=True)
    exp.add_argument("--grades", required=True, help="grades.csv of gpulab grade")
    exp.add_argument("--gradebook", required=True, help="the gradebook CSV the LMS exported")
    exp.add_argument("--assignment", required=True, help='the assignment\'s name (Canvas column "NAME (id)")')
    exp.add_argument("--out", required=True, help="the CSV to import into the LMS")
    exp.add_argument("--students", help="the CSV `lms.py import` wrote (default: found beside RESULTS)")
    exp.add_argument("--points", choices=["scaled", "raw"], default="scaled",
                     help="scaled (default): score / max_score x the assignment's points possible; raw: as graded")
    args = parser.parse_args(argv)
    try:
        return run_import(args) if args.command == "import" else run_export(args)
    except Refusal as e:
        print(f"lms.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
