import math

import numpy as np

from bayestune.formatting import display, format_value


def test_format_value_is_exact_and_reads_back():
    assert format_value(1 / 3) == repr(1 / 3) and float(format_value(1 / 3)) == 1 / 3
    assert format_value((2, 0, 1)) == format_value([2, 0, 1]) == "(2, 0, 1)"
    assert format_value(np.int64(7)) == "7" and format_value(np.float64(0.1)) == "0.1"
    assert format_value(True) == "True" and format_value("avx2") == "avx2"


def test_display_rounds_for_people():
    assert display(1 / 3) == "0.333333" and display(math.nan) == "nan"
    assert display((2, 0, 1)) == "(2,0,1)" and display(12) == "12"
