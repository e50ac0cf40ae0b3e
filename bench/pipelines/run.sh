#!/usr/bin/env bash
# bench/pipelines/run.sh: wall time of builtin pipelines from POST to SUCCEEDED (issue 5), next
# to the `ffmpeg` command line doing the same encode on the same machine in the same run.
# Release build, a private PostgreSQL (fsync off, unix socket), one worker, latency scale 0.
#   RUNS (5): runs per case; the median, minimum and maximum are printed.
#   BIN (build/release/genhost, built with the release preset when unset)
#   CASES (all): an extended regular expression; only the cases whose name matches run
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages curl ffmpeg python3 bc espeak-ng
RUNS=${RUNS:-5}
CASES=${CASES:-}
bench_release_binary
bench_workspace genhost-pipelines
port=18282
bench_start_genhost $port GENHOST_WORKERS=1 GENHOST_LATENCY_SCALE=0

# stats prints "median min max" of the numbers on stdin.
stats() { sort -n | awk '{a[NR]=$1} END {printf "%.3f %.3f %.3f", a[int((NR+1)/2)], a[1], a[NR]}'; }

# task_seconds ENDPOINT BODY: POST, poll every 20 ms until SUCCEEDED; prints the wall seconds.
# BODY is JSON, or @FILE to read it from a file (bodies with data URIs).
task_seconds() {
  python3 - "$port" "$key" "$1" "$2" <<'PY'
import json, sys, time, urllib.error, urllib.request
port, key, endpoint, body = sys.argv[1:]
if body.startswith("@"):
    body = open(body[1:]).read()
h = {"Authorization": "Bearer " + key, "X-Service-Version": "2024-11-06",
     "Content-Type": "application/json"}
t0 = time.monotonic()
try:
    r = urllib.request.urlopen(urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/{endpoint}", data=body.encode(), headers=h, method="POST"))
except urllib.error.HTTPError as e:
    sys.exit(f"POST /v1/{endpoint}: {e.code} {e.read().decode()[:600]}")
tid = json.load(r)["id"]
while True:
    t = json.load(urllib.request.urlopen(urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/tasks/{tid}", headers=h)))
    if t["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
        break
    time.sleep(0.02)
if t["status"] != "SUCCEEDED":
    sys.exit("task ended " + json.dumps(t))
print(f"{time.monotonic() - t0:.3f}")
PY
}

# command_seconds COMMAND...: wall seconds of one run of COMMAND.
command_seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

run_case() {  # NAME ENDPOINT BODY FFMPEG-ARGS...
  local name=$1 endpoint=$2 body=$3
  shift 3
  compare "$name" "$endpoint" "$body" ffmpeg -hide_banner -loglevel error -y "$@"
}

run_case_sh() {  # NAME ENDPOINT BODY SHELL-COMMAND: the reference is a shell pipeline
  compare "$1" "$2" "$3" bash -c "$4"
}

compare() {  # NAME ENDPOINT BODY REFERENCE-COMMAND...
  local name=$1 endpoint=$2 body=$3
  shift 3
  if [ -n "$CASES" ] && ! [[ $name =~ $CASES ]]; then return 0; fi
  local ours theirs
  ours=$(for _ in $(seq "$RUNS"); do task_seconds "$endpoint" "$body"; done | stats)
  theirs=$(for _ in $(seq "$RUNS"); do command_seconds "$@"; done | stats)
  local m1 m2
  m1=${ours%% *}
  m2=${theirs%% *}
  printf '%-40s genhost %s s (min %s, max %s)  ffmpeg %s s (min %s, max %s)  ratio %.2f\n' \
    "$name" "$m1" "$(echo "$ours" | cut -d' ' -f2)" "$(echo "$ours" | cut -d' ' -f3)" \
    "$m2" "$(echo "$theirs" | cut -d' ' -f2)" "$(echo "$theirs" | cut -d' ' -f3)" \
    "$(echo "$m1 / $m2" | bc -l)"
}

# The writer's x264 settings (src/media/video_writer.cpp): 2 threads and the lookahead on the
# encoding thread, which keeps the bytes the same from run to run.
x264=(-c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p -threads 2 -x264-params sync-lookahead=0
  -movflags +faststart)
echo "== builtin pipelines, POST to SUCCEEDED, median of $RUNS (ffmpeg: the same encode from lavfi)"
run_case "text_to_video 5 s 1280x720 (no audio)" text_to_video \
  '{"model":"gen4.5","promptText":"a lighthouse at dusk","ratio":"1280:720","duration":5}' \
  -f lavfi -i testsrc2=size=1280x720:rate=24 -t 5 "${x264[@]}" "$work/ff.mp4"
run_case "text_to_video 4 s 1280x720 + AAC" text_to_video \
  '{"model":"veo3.1","promptText":"a lighthouse at dusk","ratio":"1280:720","duration":4}' \
  -f lavfi -i testsrc2=size=1280x720:rate=24 -f lavfi -i sine=frequency=440:sample_rate=48000 \
  -t 4 "${x264[@]}" -c:a aac -ac 2 "$work/ff.mp4"
run_case "text_to_image 1920x1080 PNG" text_to_image \
  '{"model":"gen4_image","promptText":"a lighthouse at dusk","ratio":"1920:1080"}' \
  -f lavfi -i testsrc2=size=1920x1080:rate=1 -frames:v 1 "$work/ff.png"
run_case "sound_effect 10 s MP3" sound_effect \
  '{"model":"voice_text_to_sound_v2","promptText":"rain on a tin roof","duration":10}' \
  -f lavfi -i anoisesrc=d=10:c=pink:r=44100 -ac 2 -c:a libmp3lame "$work/ff.mp3"

# Pipelines that read media: the inputs are made here and sent as data URIs, as a client would.
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
ff -f lavfi -i testsrc2=size=1280x720:rate=1 -frames:v 1 "$work/in.png"
ff -f lavfi -i testsrc2=size=854x480:rate=24 -t 5 -c:v libx264 -preset veryfast -crf 20 \
  -pix_fmt yuv420p "$work/in.mp4"
speech="We were away a year ago, and the lighthouse kept its light on every night. The keeper wrote to us each week about the storms, the ships and the birds."
espeak-ng -w "$work/in.wav" "$speech"
# body NAME JSON: writes JSON with $png, $mp4 and $wav replaced by data URIs to $work/NAME.json.
body() {
  python3 - "$work" "$1" "$2" <<'PY'
import base64, sys
work, name, text = sys.argv[1:]
for token, file, mime in (("$png", "in.png", "image/png"), ("$mp4", "in.mp4", "video/mp4"),
                          ("$wav", "in.wav", "audio/wav")):
    if token in text:
        data = base64.b64encode(open(f"{work}/{file}", "rb").read()).decode()
        text = text.replace(token, f"data:{mime};base64,{data}")
open(f"{work}/{name}.json", "w").write(text)
PY
  echo "@$work/$1.json"
}

# A still input is decoded once and repeated by the loop filter, as the pipelines decode it once
# (`-loop 1` would make ffmpeg decode the PNG again for every frame).
repeat="loop=loop=-1:size=1,setpts=N/24/TB"
run_case "image_to_video 5 s 1280x720" image_to_video \
  "$(body i2v '{"model":"gen4.5","promptImage":"$png","promptText":"the sea moves","ratio":"1280:720","duration":5}')" \
  -i "$work/in.png" -t 5 -r 24 -vf "$repeat,zoompan=z='1+0.0005*on':d=1:s=1280x720:fps=24" \
  "${x264[@]}" "$work/ff.mp4"
run_case "video_to_video aleph2 5 s 854x480" video_to_video \
  "$(body v2v '{"model":"aleph2","videoUri":"$mp4","promptText":"make it snow"}')" \
  -i "$work/in.mp4" -vf "eq=brightness=0.05:saturation=0.8" "${x264[@]}" "$work/ff.mp4"
run_case "video_upscale 480p to 720p, 5 s" video_upscale \
  "$(body vup '{"model":"upscale_video_upscaler_creative","videoUri":"$mp4","resolution":"720p"}')" \
  -i "$work/in.mp4" -vf scale=1280:720:flags=lanczos "${x264[@]}" "$work/ff.mp4"
run_case "video_to_hdr 5 s 854x480 HDR10 HEVC" video_to_hdr \
  "$(body hdr '{"model":"ruby","videoUri":"$mp4"}')" \
  -i "$work/in.mp4" -vf "zscale=t=smpte2084:m=bt2020nc:p=bt2020:tin=bt709:min=bt709:pin=bt709:npl=400,format=yuv420p10le" \
  -c:v libx265 -preset superfast -crf 20 -tag:v hvc1 -x265-params log-level=error:hdr10=1 \
  -movflags +faststart "$work/ff.mp4"
# character_performance moves a camera over the character picture every frame (a bilinear
# resample of the whole frame, zoomed in at least 1.12x and panning) and lifts its contrast,
# driven by the reference video's motion. The reference does the same kinds of work: the picture
# cropped by a panning 1/1.12 window and scaled back bilinearly, a contrast grade, and the
# reference video decoded and laid over it small. The second case keeps the earlier, lighter
# reference (no camera, no grade) for comparison with the earlier figures.
act_body=$(body act '{"model":"act_two","character":{"type":"image","uri":"$png"},"reference":{"type":"video","uri":"$mp4"},"ratio":"1280:720"}')
camera="crop=w=1142:h=642:x='69+40*sin(t)':y='39+20*sin(2*t)',scale=1280:720:flags=bilinear"
run_case "character_performance 5 s 1280x720" character_performance "$act_body" \
  -i "$work/in.mp4" -i "$work/in.png" \
  -filter_complex "[1:v]$repeat,$camera,eq=contrast=1.05:brightness=0.01[bg];[0:v]scale=320:180[fg];[bg][fg]overlay=20:20" \
  -t 5 -r 24 "${x264[@]}" "$work/ff.mp4"
run_case "character_performance, overlay-only ref." character_performance "$act_body" \
  -i "$work/in.mp4" -i "$work/in.png" \
  -filter_complex "[1:v]$repeat,scale=1280:720[bg];[0:v]scale=320:180[fg];[bg][fg]overlay=20:20" \
  -t 5 -r 24 "${x264[@]}" "$work/ff.mp4"
# avatar_videos: a portrait with a moving mouth, 24 fps for the speech's length, H.264 + AAC. The
# reference encodes the still 1280x720 picture (repeated, as above) for the speech's duration
# (`-shortest` overshoots by the encoder's delay), with the speech as 48 kHz stereo AAC; for the
# text case it first makes the speech with the espeak-ng command line.
avatar='"avatar":{"type":"service-preset","presetId":"cooking-teacher"}'
still=(-filter_complex "[0:v]$repeat[v]" -map "[v]" -map 1:a -r 24)
aac=(-c:a aac -ac 2 -ar 48000)
wav_seconds=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$work/in.wav")
run_case "avatar_videos 1280x720, audio" avatar_videos \
  "$(body avt "{\"model\":\"gwm1_avatars\",$avatar,\"speech\":{\"type\":\"audio\",\"audio\":\"\$wav\"}}")" \
  -i "$work/in.png" -i "$work/in.wav" "${still[@]}" -t "$wav_seconds" "${aac[@]}" "${x264[@]}" \
  "$work/ff.mp4"
run_case_sh "avatar_videos 1280x720, text (espeak-ng)" avatar_videos \
  "{\"model\":\"gwm1_avatars\",$avatar,\"speech\":{\"type\":\"text\",\"text\":\"$speech\"}}" \
  "espeak-ng -w '$work/avt.wav' '$speech' && t=\$(ffprobe -v error -show_entries format=duration -of csv=p=0 '$work/avt.wav') && ffmpeg -hide_banner -loglevel error -y -i '$work/in.png' -i '$work/avt.wav' -filter_complex '[0:v]$repeat[v]' -map '[v]' -map 1:a -r 24 -t \$t ${aac[*]} ${x264[*]} '$work/ff.mp4'"
run_case "image_upscale 2x to 2560x1440 PNG" image_upscale \
  "$(body iup '{"model":"upscale_precision_upscaler_v2","imageUri":"$png","scaleFactor":2}')" \
  -i "$work/in.png" -vf "scale=iw*2:ih*2:flags=lanczos" "$work/ff.png"
run_case_sh "text_to_speech (espeak-ng, MP3)" text_to_speech \
  "{\"model\":\"voice_multilingual_v2\",\"promptText\":\"$speech\",\"voice\":{\"type\":\"service-preset\",\"presetId\":\"Maya\"}}" \
  "espeak-ng -w '$work/tts.wav' '$speech' && ffmpeg -hide_banner -loglevel error -y -i '$work/tts.wav' -ar 44100 -c:a libmp3lame '$work/ff.mp3'"
run_case "voice_isolation (MP3)" voice_isolation \
  "$(body iso '{"model":"voice_isolation","audioUri":"$wav"}')" \
  -i "$work/in.wav" -af "highpass=f=80,afftdn=nr=20" -ar 44100 -c:a libmp3lame "$work/ff.mp3"
run_case "speech_to_speech (MP3; rubberband)" speech_to_speech \
  "$(body sts '{"model":"voice_multilingual_sts_v2","media":{"type":"audio","uri":"$wav"},"voice":{"type":"service-preset","presetId":"Maya"}}')" \
  -i "$work/in.wav" \
  -af "rubberband=pitch=1.1:formant=preserved,asetrate=22050*1.1,aresample=44100,atempo=0.909,equalizer=f=3000:t=q:w=1:g=2" \
  -c:a libmp3lame "$work/ff.mp3"
run_case_sh "voice_dubbing es (MP3)" voice_dubbing \
  "$(body dub '{"model":"voice_dubbing","audioUri":"$wav","targetLang":"es"}')" \
  "espeak-ng -v es -w '$work/dub.wav' 'Esta voz fue doblada automaticamente.' && ffmpeg -hide_banner -loglevel error -y -i '$work/in.wav' -i '$work/dub.wav' -filter_complex '[0:a]afftdn=nr=40[bg];[bg][1:a]amix=inputs=2:duration=first' -ar 44100 -c:a libmp3lame '$work/ff.mp3'"
