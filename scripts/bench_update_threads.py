"""Time a PPO-sized torch update on one thread, on two, and on two with ``OMP_WAIT_POLICY=PASSIVE``.

``python scripts/bench_update_threads.py``: a network of walls' size (242 inputs, 256 and 128 hidden units,
75 outputs) takes 4 epochs of Adam steps over a rollout cut into minibatches, as PPO's update does, with the
threads set around the update as ``experiments.training.ppo.model.update_with_threads`` sets them. Each
setting runs in its own process (the wait policy is read when torch's OpenMP library loads) for 4 s and
prints the milliseconds per update. Run it on an idle machine, then beside other work on the same cores.
"""

from __future__ import annotations

import os
import subprocess
import sys

ONE_SETTING = r"""
import sys, time
import torch
threads, rollout, minibatch = (int(a) for a in sys.argv[1:4])
torch.set_num_threads(1)
net = torch.nn.Sequential(torch.nn.Linear(242, 256), torch.nn.Tanh(), torch.nn.Linear(256, 128), torch.nn.Tanh(),
                          torch.nn.Linear(128, 75))
opt = torch.optim.Adam(net.parameters())
x = torch.randn(rollout, 242)
def update():
    torch.set_num_threads(threads)
    for _ in range(4):
        for part in x.split(minibatch):
            loss = net(part).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    torch.set_num_threads(1)
update()
start, n = time.perf_counter(), 0
while time.perf_counter() - start < 4:
    update()
    n += 1
print(f"{(time.perf_counter() - start) / n * 1000:.1f}")
"""

SETTINGS = ((1, ""), (2, ""), (2, "PASSIVE"))


def time_update(threads: int, policy: str, rollout: int, minibatch: int) -> str:
    """Milliseconds per update, measured in a fresh process with ``OMP_WAIT_POLICY`` as given ('' unset)."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    argv = [sys.executable, "-c", ONE_SETTING, str(threads), str(rollout), str(minibatch)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=600).stdout.strip()


def main() -> None:
    print("| rollout (minibatch) | 1 thread | 2 threads | 2 threads, OMP_WAIT_POLICY=PASSIVE |")
    print("| --- | ---: | ---: | ---: |")
    for rollout, minibatch in ((32, 32), (4096, 2048), (32768, 2048)):
        cells = [time_update(threads, policy, rollout, minibatch) + " ms" for threads, policy in SETTINGS]
        print(f"| {rollout:,} ({minibatch:,}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
