"""Reading kbench result files (Google Benchmark JSON): what bench/summarize.py and bench/compare.py share."""


def row_name(b):
    """The row's own name, without the settings Google Benchmark appends (/iterations:1/manual_time)."""
    return b["name"].split("/iterations:")[0]


def row_error(b):
    """Why the row has no measurement ('' when it has one): 1.7 says error_message, 1.8 skip_message."""
    return b.get("error_message") or b.get("skip_message") or ""
