#!/bin/sh
# fake_iio.sh DIR [N] - builds DIR/bus/iio/devices with N (default 18) INA226 devices labelled
# ina226-u100.. (iio.md 5.2 layout: power2 raw 100 * scale 12.5 mW = 1.25 W), values newline-ended.
# Use it in a private mount namespace:  unshare -m sh -c 'mount --bind DIR/bus /sys/bus && CMD'
set -eu
dir=$1
n=${2:-18}
mkdir -p "$dir/bus/iio/devices" "$dir/bus/.staging"
i=0
while [ "$i" -lt "$n" ]; do
	d="$dir/bus/iio/devices/iio:device$i"
	mkdir -p "$d"
	printf '%s\n' ina226 > "$d/name"
	printf '%s\n' "ina226-u$((100 + i))" > "$d/label"
	printf '%s\n' 3152 > "$d/in_voltage0_raw"; printf '%s\n' 0.002500000 > "$d/in_voltage0_scale"
	printf '%s\n' 680 > "$d/in_voltage1_raw"; printf '%s\n' 1.250000000 > "$d/in_voltage1_scale"
	printf '%s\n' 100 > "$d/in_power2_raw"; printf '%s\n' 12.500000000 > "$d/in_power2_scale"
	printf '%s\n' 3152 > "$d/in_current3_raw"; printf '%s\n' 0.500000000 > "$d/in_current3_scale"
	printf '%s\n' 114 > "$d/in_sampling_frequency"
	i=$((i + 1))
done
