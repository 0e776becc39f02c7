#!/usr/bin/python3
"""Tests of scripts/grade/lms.py, the LMS round trip, on small synthetic exports of Canvas and Moodle.

    lms_test.py REPO SCRATCH

Run by CTest (tests/CMakeLists.txt).
"""

from __future__ import annotations

import csv
import io
import pathlib
import shutil
import subprocess
import sys
import tarfile
import unittest
import zipfile

REPO, SCRATCH = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
LMS = REPO / "scripts" / "grade" / "lms.py"
sys.path.insert(0, str(LMS.parent))
import lms  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LMS), *args], capture_output=True, text=True)


def zip_of(path: pathlib.Path, members: dict[str, bytes]) -> pathlib.Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def small_archive() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("labs/02-transpose/transpose.cu", "// john's\n")
    return buffer.getvalue()


def rows(path: pathlib.Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def mapping(path: pathlib.Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = SCRATCH / self.id().rsplit(".", 1)[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)


class CanvasImport(Scratch):
    def export(self) -> pathlib.Path:
        return zip_of(self.dir / "submissions.zip", {
            "smithjohn_101_5001_transpose.zip": small_archive(),
            "zoeller_late_102_5002_transpose.cu": b"// zoe's kernel\n",
            "zoeller_late_102_5002_transpose_opencl-1.cpp": b"// uploaded twice\n",
            "leeann_104_5004_scan.cu": b"// ann 104\n",
            "leeann_105_5005_scan.cu": b"// ann 105\n",
            "readme.txt": b"not a submission",
        })

    def test_one_archive_stays_an_archive_and_several_files_become_a_folder(self):
        result = run("import", "--lms", "canvas", str(self.export()), "--out", str(self.dir / "course/submissions"))
        self.assertEqual(result.returncode, 0, result.stderr)
        subs = self.dir / "course/submissions"
        self.assertEqual(sorted(p.name for p in subs.iterdir()),
                         ["leeann-104", "leeann-105", "smithjohn.zip", "zoeller"])
        with zipfile.ZipFile(subs / "smithjohn.zip") as z:
            self.assertEqual(z.namelist(), ["labs/02-transpose/transpose.cu"])
        self.assertEqual((subs / "zoeller/transpose.cu").read_text(), "// zoe's kernel\n")
        # Canvas's "-1" of a file uploaded again is taken off, so the grader finds the lab's file name.
        self.assertEqual((subs / "zoeller/transpose_opencl.cpp").read_text(), "// uploaded twice\n")
        self.assertIn("readme.txt: not named", result.stderr)

    def test_the_mapping_beside_the_submissions_gives_each_entry_its_canvas_user_id(self):
        run("import", "--lms", "canvas", str(self.export()), "--out", str(self.dir / "course/submissions"))
        students = mapping(self.dir / "course/lms-students.csv")
        self.assertEqual({k: v["lms_id"] for k, v in students.items()},
                         {"smithjohn": "101", "zoeller": "102", "leeann-104": "104", "leeann-105": "105"})
        self.assertEqual(students["zoeller"]["late"], "yes")
        self.assertEqual(students["smithjohn"]["late"], "")
        self.assertEqual(students["smithjohn"]["entry"], "smithjohn.zip")

    def test_a_folder_that_is_not_empty_is_refused(self):
        (self.dir / "subs").mkdir()
        (self.dir / "subs/old").mkdir()
        result = run("import", "--lms", "canvas", str(self.export()), "--out", str(self.dir / "subs"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("is not empty", result.stderr)


class MoodleImport(Scratch):
    def test_each_participant_folder_becomes_an_entry_named_by_the_full_name(self):
        export = zip_of(self.dir / "moodle.zip", {
            "Zoë Müller_2001_assignsubmission_file_/labs/02-transpose/transpose.cu": b"// zoe\n",
            "Zoë Müller_2001_assignsubmission_file_/labs/02-transpose/transpose.cl": b"// zoe cl\n",
            "Bob Smith_2002_assignsubmission_file_/bob.zip": small_archive(),
            "Bob Smith_2002_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
            "A/B C_2003_assignsubmission_file_/x.cu": b"x",
        })
        result = run("import", "--lms", "moodle", str(export), "--out", str(self.dir / "subs"))
        self.assertEqual(result.returncode, 0, result.stderr)
        subs = self.dir / "subs"
        self.assertEqual(sorted(p.name for p in subs.iterdir()), ["Bob Smith.zip", "Zoë Müller"])
        self.assertEqual((subs / "Zoë Müller/labs/02-transpose/transpose.cl").read_text(), "// zoe cl\n")
        self.assertIn("online text", result.stderr)
        students = mapping(self.dir / "lms-students.csv")
        self.assertEqual(students["Zoë Müller"]["lms_id"], "2001")
        self.assertEqual(students["Bob Smith"]["lms"], "moodle")

    def test_a_path_that_leaves_the_export_refuses_it(self):
        export = zip_of(self.dir / "evil.zip", {"../x_1_assignsubmission_file_/a.cu": b"x"})
        result = run("import", "--lms", "moodle", str(export), "--out", str(self.dir / "subs"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("leaves the export", result.stderr)


class Keys(unittest.TestCase):
    def test_keys_are_names_gpulab_grade_keeps_as_they_are(self):
        self.assertEqual(lms.plain_key("Zoe\u0301 O'Brien/x"), "Zoé O-Brien-x")
        self.assertEqual(lms.plain_key(".hidden"), "hidden")
        self.assertEqual(lms.plain_key("张伟"), "张伟")


GRADES = """student,submission,02-transpose/naive,score,max_score,status,error,findings
smithjohn,smithjohn.zip,8,8,10,graded,,
zoeller,zoeller,5,5,10,graded,,
leeann-104,leeann-104,,,10,not graded,the grader failed (disk full),
leeann-105,leeann-105,0,0,10,refused,missing labs,
"""

CANVAS_BOOK = """Student,ID,SIS User ID,SIS Login ID,Section,Lab 2: transpose (7001),Quiz 1 (7002),Current Score
    Points Possible,,,,,20,5,
"Smith, John",101,s101,jsmith,GPU 2026,,4,80
"Zöller, Zoë",102,s102,zz,GPU 2026,,5,90
"Lee, Ann",104,s104,alee,GPU 2026,3,5,
"Lee, Ann",105,s105,alee2,GPU 2026,,5,
Student Nobody,999,,,GPU 2026,,,
"""


class Export(Scratch):
    def setUp(self):
        super().setUp()
        (self.dir / "results").mkdir()
        (self.dir / "results/grades.csv").write_text(GRADES)
        with open(self.dir / "lms-students.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=lms.MAP_COLUMNS)
            w.writeheader()
            for key, uid in (("smithjohn", "101"), ("zoeller", "102"), ("leeann-104", "104"), ("leeann-105", "105")):
                w.writerow({"student": key, "lms": "canvas", "lms_id": uid})

    def test_canvas_gets_its_identity_columns_and_the_assignment_scaled_to_its_points(self):
        (self.dir / "book.csv").write_text(CANVAS_BOOK)
        result = run("export", "--lms", "canvas", "--grades", str(self.dir / "results/grades.csv"), "--gradebook",
                     str(self.dir / "book.csv"), "--assignment", "Lab 2: transpose", "--out", str(self.dir / "in.csv"))
        self.assertEqual(result.returncode, 0, result.stderr)
        out = rows(self.dir / "in.csv")
        self.assertEqual(out[0], ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 2: transpose (7001)"])
        self.assertEqual(out[1][0].strip(), "Points Possible")
        by_id = {r[1]: r[5] for r in out[2:]}
        # 8 of 10 is 16 of 20; the grader's failure keeps the cell as it was; a refusal is a zero.
        self.assertEqual(by_id, {"101": "16", "102": "10", "104": "3", "105": "0", "999": ""})
        self.assertIn("leeann-104: not graded", result.stderr)

    def test_the_late_penalty_counts_when_grades_has_a_final_score(self):
        (self.dir / "results/grades.csv").write_text(
            "student,submission,score,max_score,status,error,findings,submitted,due,late_days,late_penalty,"
            "final_score\nzoeller,zoeller,5,10,graded,,,2026-01-02T00:00:00Z,2026-01-01T00:00:00Z,1,10,4.5\n")
        (self.dir / "book.csv").write_text(CANVAS_BOOK)
        run("export", "--lms", "canvas", "--grades", str(self.dir / "results/grades.csv"), "--gradebook",
            str(self.dir / "book.csv"), "--assignment", "Lab 2: transpose (7001)", "--out", str(self.dir / "in.csv"),
            "--points", "raw")
        self.assertEqual({r[1]: r[5] for r in rows(self.dir / "in.csv")[2:]}["102"], "4.5")

    def test_an_assignment_not_in_the_gradebook_is_refused_with_the_ones_it_has(self):
        (self.dir / "book.csv").write_text(CANVAS_BOOK)
        result = run("export", "--lms", "canvas", "--grades", str(self.dir / "results/grades.csv"), "--gradebook",
                     str(self.dir / "book.csv"), "--assignment", "Lab 3", "--out", str(self.dir / "in.csv"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("Lab 2: transpose (7001), Quiz 1 (7002)", result.stderr)

    def test_moodle_gets_its_worksheet_back_with_the_grade_column_filled(self):
        with open(self.dir / "lms-students.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=lms.MAP_COLUMNS)
            w.writeheader()
            w.writerow({"student": "smithjohn", "lms": "moodle", "lms_id": "2001"})
        (self.dir / "sheet.csv").write_text(
            "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
            "Last modified (submission),Last modified (grade),Feedback comments\n"
            "Participant 2001,John Smith,js@example.org,Submitted for grading,,100.00,Yes,-,-,\n"
            "Participant 2002,Nobody,nb@example.org,No submission,,100.00,Yes,-,-,\n")
        result = run("export", "--lms", "moodle", "--grades", str(self.dir / "results/grades.csv"), "--gradebook",
                     str(self.dir / "sheet.csv"), "--assignment", "Lab 2", "--out", str(self.dir / "in.csv"))
        self.assertEqual(result.returncode, 0, result.stderr)
        out = rows(self.dir / "in.csv")
        self.assertEqual(out[0][4], "Grade")
        self.assertEqual([r[4] for r in out[1:]], ["80", ""])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
