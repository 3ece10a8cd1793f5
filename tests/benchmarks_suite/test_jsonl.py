"""Results files: plain and gzip-compressed JSON lines read and appended alike."""

import gzip

from benchmarks.jsonl import append_record, load_records


def test_a_gzip_file_is_read_and_appended_like_a_plain_one(tmp_path):
    plain, packed = tmp_path / "r.jsonl", tmp_path / "r.jsonl.gz"
    for path in (plain, packed):
        append_record(path, {"seed": 0})
        append_record(path, {"seed": 1})
    assert load_records(plain) == load_records(packed) == [{"seed": 0}, {"seed": 1}]
    assert gzip.decompress(packed.read_bytes()).decode().splitlines() == ['{"seed": 0}', '{"seed": 1}']


def test_a_gzip_stream_cut_short_keeps_the_records_before_the_cut(tmp_path):
    path = tmp_path / "r.jsonl.gz"
    append_record(path, {"seed": 0})
    whole = path.read_bytes()
    append_record(path, {"seed": 1})
    path.write_bytes(path.read_bytes()[: len(whole) + 10])  # the second member torn by a kill
    assert load_records(path) == [{"seed": 0}]


def test_a_torn_plain_line_is_skipped_and_the_next_append_starts_a_new_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"seed": 0}\n{"se')
    append_record(path, {"seed": 1})
    assert load_records(path) == [{"seed": 0}, {"seed": 1}]
