from envcheck import __version__


def test_version() -> None:
    assert __version__.count(".") == 2
