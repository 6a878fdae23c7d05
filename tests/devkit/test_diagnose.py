"""The fit diagnosis's pure parts (the diagnosis of a built model is tested in ``test_train.py``)."""

from bench.devkit.train.diagnose import option_rankings


def test_option_rankings_compare_within_each_question_and_at_each_letter_across_the_orders():
    # caption at A in the first question, at B in the second; margins in letter order
    assert option_rankings([2.0, 1.0], [0.5, 3.0]) == (True, True, True)
    # each question ranks the caption first, but the letter B answers Yes to anything: its caption (3.0) is below the
    # foil that stood at B in the first question (4.0)
    assert option_rankings([5.0, 4.0], [0.5, 3.0]) == (True, True, False)
    # a good judge at each letter across the orders, a wrong ranking within the first question (A reads low)
    assert option_rankings([1.0, 2.0], [0.0, 3.0]) == (False, True, True)
    assert option_rankings([0.0, 2.0], [1.0, 0.5]) == (False, False, False)
