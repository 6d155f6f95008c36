"""The one check of the front's tests that a call is refused with an error naming what."""


def expect_refused(action, words, kinds=(ValueError,)):
    """`action()` raises one of `kinds`, and its message holds every one of `words`."""
    try:
        action()
    except kinds as e:
        for w in words:
            if w not in str(e):
                raise AssertionError(f"the error does not say '{w}': {e}")
        return
    raise AssertionError(f"not refused (expected an error naming {words})")
