import { Type } from '@sinclair/typebox';

const Status = Type.Union(
  ['created', 'queued', 'processing', 'ready', 'failed', 'expired'].map((s) => Type.Literal(s)),
);
const Format = Type.Union(['txt', 'json', 'srt', 'vtt'].map((s) => Type.Literal(s)));

export const CreateBody = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    content_type: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Metadata only: the file is checked on the server after upload',
    }),
    file_size_bytes: Type.Integer({
      minimum: 1,
      description: 'The exact size of the file to upload; at most 2 GB',
    }),
    language: Type.Optional(Type.String({ default: 'auto', description: '`auto` or an ISO 639-1 code' })),
  },
  { additionalProperties: false },
);

export const CreatedView = Type.Object({
  job_id: Type.String(),
  upload_url: Type.String({
    description:
      'SigV4 presigned PUT into Fjord’s object storage: this one file, at most file_size_bytes, for one hour',
  }),
  upload_expires_in: Type.Integer(),
});

export const UploadCompleteBody = Type.Optional(
  Type.Object(
    {},
    { additionalProperties: false, description: 'Empty: an empty JSON object or no body at all' },
  ),
);

const Word = Type.Object({
  word: Type.String(),
  start: Type.Number(),
  end: Type.Number(),
  confidence: Type.Number(),
});
export const SegmentView = Type.Object({
  id: Type.Integer(),
  start: Type.Number({ description: 'Seconds from the start of the recording' }),
  end: Type.Number(),
  text: Type.String(),
  confidence: Type.Number({ description: '0 to 1: the mean of the words’ confidence' }),
  words: Type.Array(Word),
});

export const ArtifactView = Type.Object({
  artifact_id: Type.String(),
  format: Format,
  download_url: Type.String({
    description: 'Opens the file without credentials for one hour after it was handed out',
  }),
  size_bytes: Type.Integer(),
});

export const JobView = Type.Object({
  job_id: Type.String(),
  status: Status,
  language: Type.String(),
  original_filename: Type.String(),
  audio_duration_sec: Type.Union([Type.Number(), Type.Null()]),
  processing_time_ms: Type.Union([Type.Integer(), Type.Null()]),
  error_message: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  segments: Type.Optional(Type.Array(SegmentView)),
  artifacts: Type.Optional(Type.Array(ArtifactView)),
  created_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
});

export const ListQuery = Type.Object({
  status: Type.Optional(Status),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })),
});

export const ListView = Type.Object({
  jobs: Type.Array(
    Type.Object({
      job_id: Type.String(),
      status: Status,
      language: Type.String(),
      original_filename: Type.String(),
      audio_duration_sec: Type.Union([Type.Number(), Type.Null()]),
      created_at: Type.String(),
    }),
  ),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const JobParams = Type.Object({ job_id: Type.String() });
export const ArtifactParams = Type.Object({ artifact_id: Type.String() });
export const ExportBody = Type.Object({ format: Format }, { additionalProperties: false });
export const DownloadQuery = Type.Object({ token: Type.String() });
export const DeletedView = Type.Object({ status: Type.Literal('deleted'), job_id: Type.String() });
