"""Task names in sentences: reading order, and a long list cut to a sentence."""

from mwms_doctor.tasks import listed, sort_key


def test_reading_order_puts_chief_first_and_indices_numerically():
    names = ["worker:10", "evaluator:0", "worker:2", "chief:0", "ps:1", "worker:1"]
    assert sorted(names, key=sort_key) == [
        "chief:0",
        "worker:1",
        "worker:2",
        "worker:10",
        "ps:1",
        "evaluator:0",
    ]


def test_listed_names_a_few_workers_in_reading_order_once_each():
    assert listed(["worker:10", "worker:2", "worker:2", "chief:0"]) == "chief:0, worker:2, worker:10"


def test_listed_cuts_a_64_worker_list_to_its_first_names_and_a_count():
    said = listed(f"worker:{i}" for i in range(63, -1, -1))
    assert said == "worker:0, worker:1, worker:2, worker:3, worker:4, worker:5 and 58 others"
