"""``lock``'s parsed arguments as :class:`~envcheck.commands.lock_options.LockOptions` (shared by
``lock`` and ``lock diff``)."""

from __future__ import annotations

import argparse
from typing import Any


def options_from(args: argparse.Namespace) -> Any:
    from envcheck.commands.lock_options import LockOptions

    return LockOptions(
        requirements=tuple(args.requirements),
        requirement_files=tuple(args.requirement),
        profile=args.profile,
        allow_unverified=args.allow_unverified,
        spec=args.spec,
        python=tuple(args.python),
        gpus=tuple(args.gpu),
        driver=args.driver,
        arch=tuple(args.arch),
        glibc=args.glibc,
        index_url=args.index_url,
        extra_index_urls=tuple(args.extra_index_url),
        find_links=tuple(args.find_links),
        no_index=args.no_index,
        allow_local=args.allow_local,
        format=args.format,
        force=args.force,
        severity=args.severity,
        dry_run=args.dry_run,
        matrix=tuple(args.matrix),
        exclude_newer=args.exclude_newer,
        upgrade_packages=tuple(args.upgrade_package),
        from_lock=args.from_lock,
    )
