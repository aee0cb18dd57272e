import { Type } from '@sinclair/typebox';
import { JOB_TYPES } from './catalogue.js';

const Money = Type.Object({ amount: Type.Number(), currency: Type.String() });

export const JobView = Type.Object({
  id: Type.String(),
  type: Type.String({ description: 'image, video, text-to-speech or transcription' }),
  engine: Type.String(),
  status: Type.String({ description: 'queued, processing, completed, failed or cancelled' }),
  progress: Type.Integer({ minimum: 0, maximum: 100 }),
  output_files: Type.Record(Type.String(), Type.String(), {
    description:
      'Output name → download address (valid one hour): `image` for image jobs, `video` for video jobs, `audio` for speech, `transcript` for transcription',
  }),
  estimated_cost: Money,
  actual_cost: Type.Union([Money, Type.Null()]),
  error_message: Type.Union([Type.String(), Type.Null()]),
  waiting_reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why a queued job waits: set while no worker serving its engine has called in the last minute; null otherwise',
  }),
  created_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
});

export const JobBody = Type.Object(
  {
    type: Type.Union(JOB_TYPES.map((t) => Type.Literal(t))),
    engine: Type.String({ minLength: 1, maxLength: 100 }),
    inputs: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'image: prompt, aspect_ratio, negative_prompt, seed; video: prompt, duration_sec, negative_prompt, seed; text-to-speech: text, voice, format; transcription: audio_url, language',
      },
    ),
    preset: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    webhook_url: Type.Optional(
      Type.String({ pattern: '^https://', maxLength: 2000, description: 'Video jobs only: HTTPS' }),
    ),
  },
  { additionalProperties: false },
);

export const EngineView = Type.Object({
  engine: Type.String(),
  name: Type.String(),
  description: Type.String(),
  type: Type.String(),
  tier_required: Type.Union([Type.String(), Type.Null()]),
  available: Type.Boolean(),
});

export const PresetView = Type.Object({
  name: Type.String(),
  type: Type.String(),
  description: Type.String(),
});

export const PriceView = Type.Object({
  engine: Type.String(),
  sku: Type.String(),
  type: Type.String(),
  unit: Type.String(),
  price_per_unit: Type.Number(),
  currency: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
  tier_required: Type.Union([Type.String(), Type.Null()]),
});

export const JobParams = Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 64 }) });
/** An output file of a job, as downloads and uploads name it. */
export const OutputParams = Type.Object({
  job_id: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 72 }),
});
/** A signed link's token: in the query string, since the router caps path parameters at 100 characters. */
export const LinkQuery = Type.Object(
  { token: Type.String({ minLength: 10, maxLength: 4000 }) },
  { additionalProperties: false },
);

export const LeaseBody = Type.Object(
  {
    engines: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: 50,
        description: 'Narrows the engines the token was issued for; left out: all of them',
      }),
    ),
  },
  { additionalProperties: false },
);
export const LeasedJob = Type.Object({
  id: Type.String(),
  type: Type.String(),
  engine: Type.String(),
  preset: Type.Union([Type.String(), Type.Null()]),
  inputs: Type.Object({}, { additionalProperties: true }),
  lease_expires_at: Type.String(),
  time_limit_seconds: Type.Integer(),
  max_output_bytes: Type.Integer(),
});
export const HeartbeatBody = Type.Object(
  { progress: Type.Integer({ minimum: 0, maximum: 100 }) },
  { additionalProperties: false },
);
export const UploadBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 72, description: 'e.g. image.png, video.mp4, speech.wav' }),
    content_type: Type.String({ minLength: 3, maxLength: 100 }),
    size_bytes: Type.Integer({ minimum: 0, description: 'The exact size of the file to be PUT' }),
  },
  { additionalProperties: false },
);
export const UploadAddress = Type.Object({
  name: Type.String(),
  method: Type.Literal('PUT'),
  upload_url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  expires_at: Type.String(),
});
export const CompleteBody = Type.Object(
  {
    units: Type.Optional(
      Type.Number({
        minimum: 0,
        description: 'Images made, seconds of video, characters spoken or seconds of audio transcribed',
      }),
    ),
  },
  { additionalProperties: false },
);
export const FailBody = Type.Object(
  { error_message: Type.String({ minLength: 1, maxLength: 1000 }) },
  { additionalProperties: false },
);
export const WorkerView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  engines: Type.Array(Type.String()),
  online: Type.Boolean(),
  last_seen_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});
